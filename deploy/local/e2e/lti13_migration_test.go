package e2e

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"html"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/liveproctor/workspaces/deploy/local/stack"
)

const lti1p1Claim = "https://purl.imsglobal.org/spec/lti/claim/lti1p1"

// lti1p1Sign is oauth_consumer_key_sign as 1EdTech's "LTI 1.1 to 1.3
// migration" guide defines it, written here from the guide rather than
// taken from the tool: base64 of HMAC-SHA256, keyed with the LTI 1.1
// shared secret, of the consumer key, deployment id, issuer, client id,
// exp and nonce joined by '&'.
func lti1p1Sign(secret, consumerKey, deploymentID, issuer, clientID string, exp int64, nonce string) string {
	mac := hmac.New(sha256.New, []byte(secret))
	mac.Write([]byte(strings.Join([]string{consumerKey, deploymentID, issuer, clientID, strconv.FormatInt(exp, 10), nonce}, "&")))
	return base64.StdEncoding.EncodeToString(mac.Sum(nil))
}

// launchSession is the session the token of an opened launch page gives.
func launchSession(t *testing.T, s *stack.Stack, page string) sdkSession {
	t.Helper()
	var got sdkSession
	token := html.UnescapeString(between(page, `data-auth="`, `"`))
	anonymous(t).on(s).do(http.MethodGet, "/api/sdk/session", nil, "Authorization", "Bearer "+token).ok(&got)
	return got
}

// A workspace whose users launched over LTI 1.1 registers a platform for
// LTI 1.3: a 1.3 launch without an e-mail whose lti1p1 claim names a user's
// 1.1 user_id and is signed (oauth_consumer_key_sign) with the workspace's
// 1.1 shared secret opens a session for the identity that user's 1.1
// launches had; without the claim the user is someone new, and a claim
// signed with another secret, or naming another workspace's consumer key,
// is refused.
func TestLTI13MigrationKeepsLTI11Identities(t *testing.T) {
	const (
		exam       = "7c9e6679-7425-40de-944b-e07fc1f90ae7"
		userID     = "student-1p1-42"
		deployment = "dep-1"
		notSigned  = "lti1p1 claim is not signed with this workspace's LTI 1.1 shared secret"
	)
	p := startPlatform(t, platformOptions{})
	s := startLTI13Stack(t, p.URL)
	client := clientID(t, "a")
	p.SetClients(s.GatewayURL, []platformClient{{ClientID: client, DeploymentIDs: []string{deployment}}})
	w := asRoot(t).on(s).create(unique(t, "school"), nil)
	other := asRoot(t).on(s).create(unique(t, "other"), nil)
	lti, otherLTI := w.AppKeys.LTI, other.AppKeys.LTI

	// The user's LTI 1.1 launch, before the migration: no e-mail, so the
	// tool derives the identity from the consumer key and user_id.
	params := launchParams(exam)
	params.Del("lis_person_contact_email_primary")
	params.Set("user_id", userID)
	status, page, _ := postLaunch(t, s.GatewayURL, signLaunch(t, lti.LaunchURL, lti.ConsumerKey, lti.SharedSecret, params))
	if status != http.StatusOK {
		t.Fatalf("the LTI 1.1 launch: %d\n%s", status, page)
	}
	lti11 := launchSession(t, s, page)
	if lti11.Email == "" || lti11.WorkspaceID != w.WorkspaceID {
		t.Fatalf("the LTI 1.1 launch's session: %+v", lti11)
	}

	w.server(t).on(s).register(w.WorkspaceID, map[string]any{
		"issuer": p.Issuer, "clientId": client, "deploymentIds": []string{deployment},
		"authLoginUrl": p.URL + "/auth", "jwksUrl": p.URL + "/jwks",
	})

	for _, tc := range []struct {
		name string
		// key and secret are the consumer key the lti1p1 claim names and
		// the secret it is signed with; no key: no lti1p1 claim.
		key, secret string
		status      int
		// same: the session is the 1.1 launch's user; else another one.
		same bool
	}{
		{name: "signed with the workspace's 1.1 secret", key: lti.ConsumerKey, secret: lti.SharedSecret, status: http.StatusOK, same: true},
		{name: "no lti1p1 claim", status: http.StatusOK},
		{name: "signed with a wrong secret", key: lti.ConsumerKey, secret: "not-the-secret", status: http.StatusUnauthorized},
		{name: "another workspace's consumer key and its secret", key: otherLTI.ConsumerKey, secret: otherLTI.SharedSecret, status: http.StatusUnauthorized},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := p.withT(t)
			b := newLaunchBrowser(t)
			authURL := b.login(p.Login(client, deployment).URL)
			u, err := url.Parse(authURL)
			if err != nil {
				t.Fatal(err)
			}
			// The tool's nonce is in its authentication request, and the
			// test sets exp: the sign covers both as the token carries them.
			nonce, exp := u.Query().Get("nonce"), time.Now().Unix()+300
			claims := map[string]any{customClaim: map[string]any{"exam_config_id": exam}, "email": nil, "exp": exp}
			if tc.key != "" {
				claims[lti1p1Claim] = map[string]any{
					"user_id":                 userID,
					"oauth_consumer_key":      tc.key,
					"oauth_consumer_key_sign": lti1p1Sign(tc.secret, tc.key, deployment, p.Issuer, client, exp, nonce),
				}
			}
			p.Next(launchOverrides{Claims: claims})
			a := p.Authorize(authURL)
			if a.Status != http.StatusOK {
				t.Fatalf("the platform refused the authentication request: %+v", a)
			}
			status, page := b.post(a.Action, url.Values{"id_token": {a.IDToken}, "state": {a.State}})
			if tc.status != http.StatusOK {
				if reason := refusalReason(page); status != tc.status || !strings.Contains(reason, notSigned) || strings.Contains(page, "data-auth") {
					t.Fatalf("%d %q, want %d saying %q:\n%s", status, reason, tc.status, notSigned, page)
				}
				return
			}
			if status != http.StatusOK {
				t.Fatalf("the LTI 1.3 launch: %d\n%s", status, page)
			}
			got := launchSession(t, s, page)
			if got.WorkspaceID != w.WorkspaceID || (got.Email == lti11.Email) != tc.same {
				t.Fatalf("the LTI 1.3 launch's session %+v; the LTI 1.1 launch's %+v (want the same user: %t)", got, lti11, tc.same)
			}
		})
	}
}
