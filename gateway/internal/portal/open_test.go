package portal_test

import (
	"net/http"
	"strconv"
	"strings"
	"testing"

	"github.com/liveproctor/workspaces/pkg/fault"
	workspacev1 "github.com/liveproctor/workspaces/pkg/gen/workspace/v1"
	"github.com/liveproctor/workspaces/pkg/grpcfault"
)

const wantCSP = "default-src 'none'; style-src 'self'; script-src 'self'; img-src 'self'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'"

// checkHeaders holds an answer to the headers every portal answer carries.
func checkHeaders(t *testing.T, name string, a answer) {
	t.Helper()
	for header, want := range map[string]string{
		"Content-Security-Policy": wantCSP,
		"Cache-Control":           "no-store",
		"Referrer-Policy":         "no-referrer",
		"X-Content-Type-Options":  "nosniff",
	} {
		if got := a.Header.Get(header); got != want {
			t.Errorf("%s: %s %q", name, header, got)
		}
	}
}

// Opening a link's page spends nothing and calls nothing: a mail scanner
// or a chat preview that fetches it leaves it usable. The page's one
// button posts to the same address.
func TestOpeningALinkCallsNothing(t *testing.T) {
	e := newEnv(t)
	a := e.do(t, http.MethodGet, "/portal/open/"+linkSecret, "", nil, nil)
	if a.StatusCode != http.StatusOK || len(e.fake.received()) != 0 {
		t.Fatalf("%d:\n%s", a.StatusCode, a.body)
	}
	checkHeaders(t, "open", a)
	checkPage(t, "open", a.body)
	forms := findAll(parse(t, a.body), "form")
	if len(forms) != 1 || attr(forms[0], "method") != "post" || attr(forms[0], "action") != "/portal/open/"+linkSecret ||
		len(findAll(forms[0], "button")) != 1 {
		t.Fatalf("the page's form:\n%s", a.body)
	}
	if a.Header.Get("Set-Cookie") != "" {
		t.Errorf("a cookie: %s", a.Header.Get("Set-Cookie"))
	}
}

// The button spends the link: the session's token goes into a cookie the
// portal's pages get, scripts cannot read and plain http never carries,
// until the session's end, and the browser goes on to the home page.
func TestPostingTheLinkStartsTheSession(t *testing.T) {
	e := newEnv(t)
	a := e.do(t, http.MethodPost, "/portal/open/"+linkSecret, "", nil, sameSite)
	if a.StatusCode != http.StatusSeeOther || a.Header.Get("Location") != "/portal/" {
		t.Fatalf("%d %s:\n%s", a.StatusCode, a.Header.Get("Location"), a.body)
	}
	calls := e.fake.received()
	if len(calls) != 1 || calls[0].req.(*workspacev1.OpenPortalLinkRequest).GetSecret() != linkSecret ||
		len(calls[0].session) != 0 || calls[0].md.Get("x-request-id")[0] != requestID {
		t.Fatalf("calls %+v", calls)
	}
	cookies := a.Cookies()
	if len(cookies) != 1 {
		t.Fatalf("cookies %v", a.Header["Set-Cookie"])
	}
	c := cookies[0]
	if c.Name != "portal_session" || c.Value != token || c.Path != "/portal" || !c.HttpOnly || !c.Secure || c.SameSite != http.SameSiteLaxMode ||
		c.MaxAge < 3590 || c.MaxAge > 3600 {
		t.Fatalf("cookie %s", a.Header.Get("Set-Cookie"))
	}
	if raw := a.Header.Get("Set-Cookie"); !strings.Contains(raw, "Max-Age="+strconv.Itoa(c.MaxAge)) {
		t.Fatalf("cookie %s", raw)
	}
}

// A link used, revoked or expired answers 401 with what to do, and no
// cookie; a busy service 503 with a time to come back.
func TestARefusedLinkSaysWhatToDo(t *testing.T) {
	e := newEnv(t)
	a := e.do(t, http.MethodPost, "/portal/open/spent-secret", "", nil, sameSite)
	if a.StatusCode != http.StatusUnauthorized || !strings.Contains(a.body, "unknown, used, revoked or expired") ||
		!strings.Contains(a.body, "Ask your vendor for a new link") || a.Header.Get("Set-Cookie") != "" {
		t.Fatalf("%d %v:\n%s", a.StatusCode, a.Header, a.body)
	}
	checkHeaders(t, "refused link", a)
	checkPage(t, "refused link", a.body)

	e.fake.fail("OpenPortalLink", grpcfault.Status(fault.New(fault.Unavailable, "redis is down at 10.0.0.7")))
	a = e.do(t, http.MethodPost, "/portal/open/"+linkSecret, "", nil, sameSite)
	if a.StatusCode != http.StatusServiceUnavailable || a.Header.Get("Retry-After") == "" || strings.Contains(a.body, "10.0.0.7") {
		t.Fatalf("%d %v:\n%s", a.StatusCode, a.Header, a.body)
	}
}

// The link's form can carry no CSRF token, so it must come from the
// portal's own page: another site's form, or a post no browser sent, is
// 403 and spends nothing.
func TestTheLinkOpensOnlyFromItsOwnPage(t *testing.T) {
	e := newEnv(t)
	host := strings.TrimPrefix(e.url, "http://")
	for name, h := range map[string]http.Header{
		"cross-site":             {"Sec-Fetch-Site": {"cross-site"}},
		"same-site":              {"Sec-Fetch-Site": {"same-site"}},
		"another origin":         {"Origin": {"https://evil.example"}},
		"an opaque origin":       {"Origin": {"null"}},
		"neither":                nil,
		"fetch-site wins origin": {"Sec-Fetch-Site": {"cross-site"}, "Origin": {"http://" + host}},
	} {
		a := e.do(t, http.MethodPost, "/portal/open/"+linkSecret, "", nil, h)
		if a.StatusCode != http.StatusForbidden || a.Header.Get("Set-Cookie") != "" {
			t.Errorf("%s: %d", name, a.StatusCode)
		}
		checkHeaders(t, name, a)
	}
	if calls := e.fake.received(); len(calls) != 0 {
		t.Fatalf("calls %+v", calls)
	}
	// A browser that sends no Sec-Fetch-Site sends Origin.
	if a := e.do(t, http.MethodPost, "/portal/open/"+linkSecret, "", nil, http.Header{"Origin": {"http://" + host}}); a.StatusCode != http.StatusSeeOther {
		t.Fatalf("same origin: %d", a.StatusCode)
	}
}
