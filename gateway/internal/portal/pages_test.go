package portal_test

import (
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/liveproctor/workspaces/pkg/fault"
	workspacev1 "github.com/liveproctor/workspaces/pkg/gen/workspace/v1"
	"github.com/liveproctor/workspaces/pkg/grpcfault"
)

// pagePaths are every page a session reads.
var pagePaths = []string{
	"/portal/",
	"/portal/lti13",
	"/portal/registrations",
	"/portal/registrations/new",
	"/portal/registrations/" + regID,
	"/portal/registrations/" + regID + "/deployments/remove?deployment=2%3Aodd%2Fid",
	"/portal/registrations/" + regID + "/delete",
	"/portal/lti11",
	"/portal/keys",
	"/portal/keys/" + serverKey + "/rotate",
	"/portal/keys/" + serverKey + "/revoke",
	"/portal/events",
}

// Without a cookie, every page is the 401 page, and nothing is asked of
// the service.
func TestNoSessionNoCall(t *testing.T) {
	e := newEnv(t)
	for _, path := range pagePaths {
		a := e.do(t, http.MethodGet, path, "", nil, nil)
		if a.StatusCode != http.StatusUnauthorized || !strings.Contains(a.body, "Ask your vendor for a new link") {
			t.Errorf("%s: %d:\n%s", path, a.StatusCode, a.body)
		}
		checkHeaders(t, path, a)
		checkPage(t, path, a.body)
	}
	if calls := e.fake.received(); len(calls) != 0 {
		t.Fatalf("calls %+v", calls)
	}
}

// Every page renders for a session, held to the page rules, and every call
// it makes presents the session's token as portal-session metadata.
func TestEveryPageRenders(t *testing.T) {
	e := newEnv(t)
	for _, path := range pagePaths {
		a := e.get(t, path)
		if a.StatusCode != http.StatusOK {
			t.Errorf("%s: %d:\n%s", path, a.StatusCode, a.body)
			continue
		}
		checkHeaders(t, path, a)
		checkPage(t, path, a.body)
		for _, want := range []string{"Springfield District", `href="https://vendor.example/settings" rel="noreferrer"`, `action="/portal/sign-out"`} {
			if !strings.Contains(a.body, want) {
				t.Errorf("%s lacks %s", path, want)
			}
		}
		calls := e.fake.received()
		// The session's answer names its workspace: no page asks for it.
		if len(calls) < 1 || calls[0].method != "GetPortalSession" || slices.ContainsFunc(calls, func(c call) bool { return c.method == "GetWorkspace" }) {
			t.Errorf("%s: calls %+v", path, calls)
		}
		for _, c := range calls {
			if c.method != "GetLtiConfiguration" && (len(c.session) != 1 || c.session[0] != token) {
				t.Errorf("%s: %s presented %v", path, c.method, c.session)
			}
			if got := c.md.Get("authorization"); len(got) != 0 {
				t.Errorf("%s: %s carried authorization", path, c.method)
			}
		}
	}
}

// What each page shows: the values an LMS asks for, from the service; a
// registration's launch health; the audit trail's actors.
func TestPagesShowTheirValues(t *testing.T) {
	e := newEnv(t)
	for path, wants := range map[string][]string{
		"/portal/lti13": {
			`value="https://lti.example.com/lti/v1p3/login"`, `value="https://lti.example.com/lti/v1p3/launch"`,
			`value="https://lti.example.com/lti/v1p3/jwks.json"`, `value="https://lti.example.com/lti/v1p3/workspaces/springfield/canvas.json"`,
			`id="canvas"`, `id="moodle"`, `id="blackboard"`, `id="d2l"`, `id="schoology"`, `aria-live="polite"`,
		},
		"/portal/registrations": {"https://canvas.instructure.com", "10000000000001", "Recently refused launches</dt><dd>1<"},
		"/portal/registrations/" + regID: {
			"the deployment id 3:new is not registered", "req-failed-7", "26 Nov 2026, 09:00 UTC",
			`/deployments/remove?deployment=2%3aodd%2fid`, "https://sso.canvaslms.com/api/lti/security/jwks",
		},
		"/portal/lti11":  {`value="https://lti.example.com/lti/v1/workspaces/springfield/config.xml"`, `value="https://lti.example.com/lti/v1/launch"`, `value="` + ltiKey + `"`},
		"/portal/keys":   {serverKey, ltiKey, "26 Nov 2026, 09:15 UTC", "Not recorded"},
		"/portal/events": {"portalLink.opened", "Administrator&#39;s portal (link " + linkID + ")", "req-open"},
	} {
		a := e.get(t, path)
		for _, want := range wants {
			if !strings.Contains(a.body, want) {
				t.Errorf("%s lacks %s:\n%s", path, want, a.body)
			}
		}
	}
	// The LTI 1.1 page lists the LTI pair only.
	if a := e.get(t, "/portal/lti11"); strings.Contains(a.body, serverKey) {
		t.Errorf("the LTI 1.1 page shows the server pair")
	}
}

// A session the service no longer knows (expired, revoked, its workspace
// deleted) gets the 401 page, and the cookie goes.
func TestAnEndedSessionAsksForANewLink(t *testing.T) {
	e := newEnv(t)
	for _, path := range pagePaths {
		a := e.do(t, http.MethodGet, path, "an-expired-token", nil, nil)
		if a.StatusCode != http.StatusUnauthorized || !strings.Contains(a.body, "Your portal session has ended") ||
			!strings.Contains(a.Header.Get("Set-Cookie"), "portal_session=; Path=/portal; Max-Age=0") {
			t.Errorf("%s: %d %v:\n%s", path, a.StatusCode, a.Header, a.body)
		}
	}
}

// The style sheet and the script are served, cacheable; an unknown path
// is the 404 page.
func TestStaticFilesAndUnknownPaths(t *testing.T) {
	e := newEnv(t)
	for path, contentType := range map[string]string{"/portal/static/portal.css": "text/css; charset=utf-8", "/portal/static/portal.js": "application/javascript; charset=utf-8"} {
		a := e.do(t, http.MethodGet, path, "", nil, nil)
		if a.StatusCode != http.StatusOK || a.Header.Get("Content-Type") != contentType || a.Header.Get("Cache-Control") != "public, max-age=300" ||
			a.Header.Get("ETag") == "" || a.Header.Get("Content-Security-Policy") != wantCSP || a.body == "" {
			t.Errorf("%s: %d %v", path, a.StatusCode, a.Header)
		}
	}
	for _, path := range []string{"/portal/static/other.js", "/portal/nothing", "/portal/keys/x/y/z"} {
		a := e.do(t, http.MethodGet, path, token, nil, nil)
		if a.StatusCode != http.StatusNotFound || !strings.Contains(a.body, "There is no such page") {
			t.Errorf("%s: %d:\n%s", path, a.StatusCode, a.body)
		}
		checkHeaders(t, path, a)
	}
	if calls := e.fake.received(); len(calls) != 0 {
		t.Fatalf("calls %+v", calls)
	}
}

// A refusal shows the service's message with the status httperr's table
// gives its kind; an internal error shows a fixed text, never its cause.
func TestRefusalsShowTheServicesMessage(t *testing.T) {
	e := newEnv(t)
	e.fake.fail("ListWorkspaceEvents", grpcfault.Status(fault.New(fault.Invalid, "pageToken is not a token from this list")))
	if a := e.get(t, "/portal/events?pageToken=bogus"); a.StatusCode != http.StatusBadRequest || !strings.Contains(a.body, "is not a token from this list") {
		t.Errorf("%d:\n%s", a.StatusCode, a.body)
	}
	e.fake.fail("ListWorkspaceKeys", grpcfault.Status(fault.New(fault.Internal, "mongo: connection refused at 10.1.2.3")))
	a := e.get(t, "/portal/keys")
	if a.StatusCode != http.StatusInternalServerError || strings.Contains(a.body, "10.1.2.3") || !strings.Contains(a.body, "error on our side") {
		t.Errorf("%d:\n%s", a.StatusCode, a.body)
	}
	checkPage(t, "internal", a.body)
	if a := e.get(t, "/portal/registrations/unknown-id"); a.StatusCode != http.StatusNotFound || !strings.Contains(a.body, "LTI registration unknown-id not found") {
		t.Errorf("%d:\n%s", a.StatusCode, a.body)
	}
	e.fake.fail("ListWorkspaceKeys", nil)
	if a := e.get(t, "/portal/keys/unknown-key/revoke"); a.StatusCode != http.StatusNotFound || !strings.Contains(a.body, "no key pair with this app key") {
		t.Errorf("%d:\n%s", a.StatusCode, a.body)
	}
}

// The audit trail pages as the service does: a full page links the next
// by its token, a short one is the end for now.
func TestTheAuditTrailPages(t *testing.T) {
	e := newEnv(t)
	if a := e.get(t, "/portal/events"); strings.Contains(a.body, "Next page") || strings.Contains(a.body, "First page") {
		t.Errorf("a short first page links on:\n%s", a.body)
	}
	e.fake.mu.Lock()
	for len(e.fake.events) < 50 {
		e.fake.events = append(e.fake.events, e.fake.events[0])
	}
	e.fake.mu.Unlock()
	e.fake.received()
	a := e.get(t, "/portal/events?pageToken=abc%2Bdef")
	if !strings.Contains(a.body, `href="/portal/events?pageToken=next-token%2B%2F%3D"`) || !strings.Contains(a.body, `href="/portal/events">First page`) {
		t.Errorf("links:\n%s", a.body)
	}
	calls := e.fake.received()
	req, ok := calls[len(calls)-1].req.(*workspacev1.ListWorkspaceEventsRequest)
	if !ok || req.GetId() != workspaceID || req.GetPageToken() != "abc+def" || req.GetPageSize() != 50 {
		t.Errorf("asked %v", calls[len(calls)-1].req)
	}
}
