package e2e

import (
	"html"
	"maps"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/liveproctor/workspaces/deploy/local/stack"
)

// certCase is one case of the certification list: how the platform's
// launch differs from a good one, and what the tool must answer.
type certCase struct {
	name string
	// next shapes the platform's answer; the exam claim is added to it.
	next launchOverrides
	// send drives a case that is not one launch shaped by next in a
	// browser of its own (replays, states); it returns the tool's answer
	// to the form post that counts.
	send func(t *testing.T, l lti13Launches) (int, string)
	// status is 200 for a launch the tool opens (a page with the user and
	// a token the session route takes), else the refusal's; says is a
	// fragment of the refusal's reason that names what is wrong.
	status int
	says   string
}

// The cases of 1EdTech's LTI Advantage Tool Certification test suite (the
// Conformance Certification Guide's tool launch tests, its "known bad
// payloads": no kid, an incorrect kid, a wrong or missing LTI version, an
// invalid message, missing claims, incorrect timestamps, …), with the
// Security Framework 1.0 rules they come from: the JOSE header (§5.1.3 and
// §6: RS256 only, the kid of a key in the platform's published set), the
// authentication response (§5.1.3: iss is the registration's issuer, aud
// holds the client_id, several audiences need azp and azp is the
// client_id, exp and iat within a small leeway, the nonce is the request's
// and used once), the state bound to the browser that logged in (§5.1.1.2
// and OIDC's state, §7.3.1 of its Core), and LTI Core 1.3's required
// message claims (§5.3: version 1.3.0, a known message type, deployment_id,
// target_link_uri, resource_link, sub). Each case is a launch from the test
// platform (npm jose) through the real stack, accepted, or refused with a
// reason that names its own rule: two cases refused under different rules
// never get the same message. Time is the platform's clock, which the test
// sets relative to the stack's (clock_offset).
func TestLTI13CertificationCases(t *testing.T) {
	p, s, workspaceID, clients := setUpLTI13(t)
	launches := clients[0]
	own := launches.clientID
	const foreign = "another-tool"

	// Another workspace registers the same client under another issuer: a
	// token claiming that issuer names a registration that is not the
	// login's.
	otherIssuer := p.Issuer + "/another-tenant"
	other := asRoot(t).on(s).create(unique(t, "other"), nil)
	other.server(t).on(s).register(other.WorkspaceID, map[string]any{
		"issuer": otherIssuer, "clientId": own, "deploymentIds": []string{"dep-1"},
		"authLoginUrl": p.URL + "/auth", "jwksUrl": p.URL + "/jwks",
	})

	const (
		algorithm    = "must be signed with RS256"
		noKID        = "has no kid"
		keyNotFound  = "key not found"
		signature    = "signature does not verify"
		unregistered = "match no registration"
		otherLogin   = "are not those of the login that started this launch"
		audience     = "is not for this tool"
		deployment   = "deployment_id is not registered"
		version      = "version claim must be 1.3.0"
		messageType  = "message_type claim must be LtiResourceLinkRequest or LtiDeepLinkingRequest"
		resourceLink = "resource_link claim must be an object"
		targetLink   = "target_link_uri claim must be this tool's launch URL"
		subject      = "sub must identify the user"
		timeWindow   = "has expired, or is dated in the future"
		nonce        = "nonce is not the one this login issued"
		browser      = "state is not this browser's"
		stateUnused  = "state is unknown, already used or expired"
	)
	claims := func(c map[string]any) launchOverrides { return launchOverrides{Claims: c} }
	cases := []certCase{
		{name: "a valid launch", status: http.StatusOK},
		{name: "several audiences with azp the client_id", next: claims(map[string]any{"aud": []string{own, foreign}}), status: http.StatusOK},
		{name: "iat 5 s ahead, within the leeway", next: launchOverrides{ClockOffset: 5}, status: http.StatusOK},

		{name: "alg none", next: launchOverrides{SignWith: "none"}, status: http.StatusUnauthorized, says: algorithm},
		{name: "HS256 keyed with the public key", next: launchOverrides{SignWith: "HS256"}, status: http.StatusUnauthorized, says: algorithm},
		{name: "no kid", next: launchOverrides{Header: map[string]any{"kid": nil}}, status: http.StatusUnauthorized, says: noKID},
		{name: "a kid nobody published", next: launchOverrides{Header: map[string]any{"kid": "unknown-kid"}}, status: http.StatusUnauthorized, says: keyNotFound},
		{name: "another key under the published kid", next: launchOverrides{SignWith: "other-key"}, status: http.StatusUnauthorized, says: signature},

		{name: "a foreign aud", next: claims(map[string]any{"aud": foreign, "azp": nil}), status: http.StatusUnauthorized, says: unregistered},
		{name: "several audiences without azp", next: claims(map[string]any{"aud": []string{own, foreign}, "azp": nil}), status: http.StatusUnauthorized, says: audience},
		{name: "several audiences with a foreign azp", next: claims(map[string]any{"aud": []string{own, foreign}, "azp": foreign}), status: http.StatusUnauthorized, says: unregistered},
		{name: "one audience with a foreign azp", next: claims(map[string]any{"azp": foreign}), status: http.StatusUnauthorized, says: audience},
		{name: "an issuer nobody registered", next: claims(map[string]any{"iss": "https://elsewhere.example"}), status: http.StatusUnauthorized, says: unregistered},
		{name: "the issuer of another registration", next: claims(map[string]any{"iss": otherIssuer}), status: http.StatusUnauthorized, says: otherLogin},

		{name: "an unknown deployment", next: launchOverrides{DeploymentID: "dep-unknown"}, status: http.StatusUnauthorized, says: deployment},
		{name: "version 1.2.0", next: claims(map[string]any{"https://purl.imsglobal.org/spec/lti/claim/version": "1.2.0"}), status: http.StatusBadRequest, says: version},
		{name: "an unknown message type", next: launchOverrides{MessageType: "LtiMadeUpRequest"}, status: http.StatusBadRequest, says: messageType},
		{name: "no resource_link", next: claims(map[string]any{"https://purl.imsglobal.org/spec/lti/claim/resource_link": nil}), status: http.StatusBadRequest, says: resourceLink},
		{name: "target_link_uri not the tool's", next: claims(map[string]any{"https://purl.imsglobal.org/spec/lti/claim/target_link_uri": "https://elsewhere.example/lti/v1p3/launch"}), status: http.StatusBadRequest, says: targetLink},
		{name: "no sub", next: claims(map[string]any{"sub": nil}), status: http.StatusBadRequest, says: subject},

		{name: "iat 120 s ahead", next: launchOverrides{ClockOffset: 120}, status: http.StatusUnauthorized, says: timeWindow},
		{name: "expired", next: launchOverrides{ClockOffset: -600}, status: http.StatusUnauthorized, says: timeWindow},

		{name: "a nonce never issued", next: claims(map[string]any{"nonce": "never-issued"}), status: http.StatusUnauthorized, says: nonce},
		{name: "a replayed nonce (a used id_token with a new login's state)", send: replayedNonce, status: http.StatusUnauthorized, says: nonce},
		{name: "a replayed launch (the same form posted twice)", send: replayedLaunch, status: http.StatusUnauthorized, says: stateUnused},
		{name: "a login state never issued", send: neverIssuedState, status: http.StatusUnauthorized, says: stateUnused},
		{name: "another browser's state, no cookie", send: stateWithoutCookie, status: http.StatusUnauthorized, says: browser},
		{name: "another browser's state, another login's cookie", send: stateWithOtherLoginsCookie, status: http.StatusUnauthorized, says: browser},
	}

	reasons := map[string]string{} // says → the message observed
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			l := launches
			l.t = t
			var status int
			var page string
			if tc.send != nil {
				status, page = tc.send(t, l)
			} else {
				status, page = certLaunch(t, l, tc.next)
			}
			if tc.status == http.StatusOK {
				wantLaunchOpened(t, s, workspaceID, status, page)
				return
			}
			reason := refusalReason(page)
			if status != tc.status || !strings.Contains(reason, tc.says) || strings.Contains(page, "data-auth") {
				t.Fatalf("%d %q, want %d saying %q:\n%s", status, reason, tc.status, tc.says, page)
			}
			if seen, ok := reasons[tc.says]; ok && seen != reason {
				t.Errorf("refused as %q, and another case under the same rule as %q", reason, seen)
			}
			reasons[tc.says] = reason
		})
	}
	byReason := map[string]string{}
	for says, reason := range reasons {
		if rule, ok := byReason[reason]; ok {
			t.Errorf("the refusals under %q and %q share one message: %q", rule, says, reason)
		}
		byReason[reason] = says
	}
}

// certLaunch runs one launch shaped by o (with the exam claim) in a browser
// of its own.
func certLaunch(t *testing.T, l lti13Launches, o launchOverrides) (int, string) {
	t.Helper()
	b := newLaunchBrowser(t)
	action, form := l.start(b, withExam(o))
	return b.post(action, form)
}

// withExam adds the exam claim to o's claims patch, leaving o's map as it
// is.
func withExam(o launchOverrides) launchOverrides {
	c := maps.Clone(withExamClaim.Claims)
	maps.Copy(c, o.Claims)
	o.Claims = c
	return o
}

// wantLaunchOpened checks an accepted launch: the page with the user, and a
// token the session route takes for the user of the workspace.
func wantLaunchOpened(t *testing.T, s *stack.Stack, workspaceID string, status int, page string) {
	t.Helper()
	if status != http.StatusOK || !strings.Contains(page, `data-email="ada@school.example"`) {
		t.Fatalf("%d, want the launch page with the user:\n%s", status, page)
	}
	var got sdkSession
	token := html.UnescapeString(between(page, `data-auth="`, `"`))
	anonymous(t).on(s).do(http.MethodGet, "/api/sdk/session", nil, "Authorization", "Bearer "+token).ok(&got)
	if got.Email != "ada@school.example" || got.WorkspaceID != workspaceID {
		t.Fatalf("the launch's session: %+v, want ada@school.example of %s", got, workspaceID)
	}
}

// refusalReason is the reason a refusal page gives.
func refusalReason(page string) string {
	return html.UnescapeString(between(page, `<p id="reason">`, `</p>`))
}

// openedLaunch runs a good launch in b and fails unless the tool opens it.
func openedLaunch(t *testing.T, l lti13Launches, b *launchBrowser) (string, url.Values) {
	t.Helper()
	action, form := l.start(b, withExamClaim)
	if status, page := b.post(action, form); status != http.StatusOK {
		t.Fatalf("the launch to replay: %d\n%s", status, page)
	}
	return action, form
}

// replayedLaunch posts an opened launch's form again, with its state's
// cookie back, so that only the used state refuses it.
func replayedLaunch(t *testing.T, l lti13Launches) (int, string) {
	b := newLaunchBrowser(t)
	action, form := openedLaunch(t, l, b)
	return b.post(action, form, stateCookie(form.Get("state")))
}

// replayedNonce posts an opened launch's id_token with the state of a new
// login in the same browser: the state is good, the nonce the old one.
func replayedNonce(t *testing.T, l lti13Launches) (int, string) {
	b := newLaunchBrowser(t)
	_, used := openedLaunch(t, l, b)
	action, fresh := l.start(b, withExamClaim)
	return b.post(action, url.Values{"id_token": {used.Get("id_token")}, "state": {fresh.Get("state")}})
}

// neverIssuedState posts a good id_token with a state no login issued, and
// that state's cookie.
func neverIssuedState(t *testing.T, l lti13Launches) (int, string) {
	b := newLaunchBrowser(t)
	action, form := l.start(b, withExamClaim)
	forged := randomKid(t)
	form.Set("state", forged)
	return b.post(action, form, stateCookie(forged))
}

// stateWithoutCookie posts a launch from a browser that did not log in.
func stateWithoutCookie(t *testing.T, l lti13Launches) (int, string) {
	action, form := l.start(newLaunchBrowser(t), withExamClaim)
	return newLaunchBrowser(t).post(action, form)
}

// stateWithOtherLoginsCookie posts Bob's launch from Alice's browser, whose
// cookie under the name of Bob's state holds Alice's own state.
func stateWithOtherLoginsCookie(t *testing.T, l lti13Launches) (int, string) {
	alice, bob := newLaunchBrowser(t), newLaunchBrowser(t)
	_, hers := l.start(alice, withExamClaim)
	action, his := l.start(bob, withExamClaim)
	return alice.post(action, his, &http.Cookie{Name: stateCookie(his.Get("state")).Name, Value: hers.Get("state")})
}
