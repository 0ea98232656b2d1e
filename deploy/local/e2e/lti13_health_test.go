package e2e

import (
	"html"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
)

// A registration's launch health, as its administrator reads it over
// REST: nothing before the first launch; a launch the tool refuses for a
// deployment the registration does not hold, and a login initiation
// refused for the same, appear first among recentFailures with the
// refusal page's words and the request's id; an accepted launch sets
// lastLaunchAt. A login with a client id no registration holds is told to
// the issuer's registrations, all of this workspace's.
func TestLTI13LaunchHealth(t *testing.T) {
	const exam = "7c9e6679-7425-40de-944b-e07fc1f90ae7"
	p, s, workspaceID, clients := setUpLTI13(t)
	admin := asRoot(t).on(s)
	regs := admin.registrations(workspaceID)
	if len(regs) != 2 || regs[0].ClientID != clients[0].clientID {
		t.Fatalf("the registrations: %+v", regs)
	}
	reg := regs[0]
	health := func(registrationID string) ltiRegistration {
		t.Helper()
		var got ltiRegistration
		admin.get(registrationPath(workspaceID, registrationID)).ok(&got)
		return got
	}
	if got := health(reg.ID); got.LastLaunchAt != nil || got.RecentFailures == nil || len(got.RecentFailures) != 0 {
		t.Fatalf("before any launch: lastLaunchAt %v, recentFailures %#v; want null and []", got.LastLaunchAt, got.RecentFailures)
	}

	// The platform launches with a deployment id the registration lacks.
	b := newLaunchBrowser(t)
	unknownDeployment := launchOverrides{Claims: map[string]any{
		customClaim: map[string]any{"exam_config_id": exam},
		"https://purl.imsglobal.org/spec/lti/claim/deployment_id": "dep-9",
	}}
	action, form := clients[0].start(b, unknownDeployment)
	launchID := unique(t, "launch")
	status, page := b.postWith(action, form, http.Header{"X-Request-Id": {launchID}})
	const launchWords = "the launch's deployment_id is not registered: add it to the registration"
	if status != http.StatusUnauthorized || !strings.Contains(html.UnescapeString(page), launchWords) {
		t.Fatalf("a launch with an unknown deployment: %d\n%s", status, page)
	}
	got := health(reg.ID)
	if got.LastLaunchAt != nil || len(got.RecentFailures) != 1 {
		t.Fatalf("after a refused launch: %+v", got)
	}
	if f := got.RecentFailures[0]; f.Reason != launchWords || f.RequestID != launchID || !timePattern.MatchString(f.At) {
		t.Fatalf("the refused launch recorded as %+v, want %q in %s", f, launchWords, launchID)
	}

	// A login initiation naming that deployment is refused before the
	// platform is asked; it is the newest failure.
	loginID := unique(t, "login")
	status, page = b.get(p.Login(clients[0].clientID, "dep-9").URL, loginID)
	const loginWords = "the login's lti_deployment_id is not one of the registration's deployment ids: add it to the registration"
	if status != http.StatusUnauthorized || !strings.Contains(html.UnescapeString(page), loginWords) {
		t.Fatalf("a login with an unknown deployment: %d\n%s", status, page)
	}
	got = health(reg.ID)
	if len(got.RecentFailures) != 2 || got.RecentFailures[0].Reason != loginWords || got.RecentFailures[0].RequestID != loginID ||
		got.RecentFailures[1].RequestID != launchID {
		t.Fatalf("after a refused login: %+v", got.RecentFailures)
	}

	// An accepted launch.
	action, form = clients[0].start(b, launchOverrides{Claims: map[string]any{customClaim: map[string]any{"exam_config_id": exam}}})
	if status, page := b.post(action, form); status != http.StatusOK {
		t.Fatalf("the launch: %d\n%s", status, page)
	}
	got = health(reg.ID)
	if got.LastLaunchAt == nil || !timePattern.MatchString(*got.LastLaunchAt) || *got.LastLaunchAt < got.RecentFailures[0].At ||
		len(got.RecentFailures) != 2 {
		t.Fatalf("after an accepted launch: lastLaunchAt %v, %d failures", got.LastLaunchAt, len(got.RecentFailures))
	}
	for _, r := range admin.registrations(workspaceID) {
		if r.ID == reg.ID && (r.LastLaunchAt == nil || *r.LastLaunchAt != *got.LastLaunchAt || len(r.RecentFailures) != 2) {
			t.Fatalf("the list renders another health: %+v", r)
		}
	}

	// A client id of this issuer that no registration holds: both
	// registrations hear of it, as they are one workspace's.
	login := p.Login(clients[0].clientID, "dep-1")
	u, err := url.Parse(login.URL)
	if err != nil {
		t.Fatal(err)
	}
	q := u.Query()
	q.Set("client_id", "not-registered")
	u.RawQuery = q.Encode()
	if status, page := b.get(u.String(), unique(t, "unknown-client")); status != http.StatusUnauthorized {
		t.Fatalf("a login with an unknown client id: %d\n%s", status, page)
	}
	for _, r := range admin.registrations(workspaceID) {
		if len(r.RecentFailures) == 0 || !strings.Contains(r.RecentFailures[0].Reason, `client_id "not-registered", which no registration of this issuer holds`) {
			t.Fatalf("registration %s after a login with an unknown client id: %+v", r.ClientID, r.RecentFailures)
		}
	}
}

// get opens target in b with the request id id (X-Request-Id), as a page
// the LMS sends the browser to, and holds the answer to the document.
func (b *launchBrowser) get(target, id string) (int, string) {
	b.t.Helper()
	req, err := http.NewRequest(http.MethodGet, target, nil)
	if err != nil {
		b.t.Fatal(err)
	}
	req.Header.Set("X-Request-Id", id)
	resp, err := b.http.Do(req)
	if err != nil {
		b.t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		b.t.Fatal(err)
	}
	apiDoc.check(b.t, req, resp.StatusCode, resp.Header, body)
	return resp.StatusCode, string(body)
}
