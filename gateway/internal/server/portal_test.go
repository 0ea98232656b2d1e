package server_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/liveproctor/workspaces/gateway/internal/reqstate"
	"github.com/liveproctor/workspaces/pkg/clientaddr"
)

// The gateway serves the portal's pages under /portal/, inside its
// request ids and access log, before the REST routes: a page without a
// session is the portal's 401 page, not the API's JSON, and asks nothing
// of the backend.
func TestThePortalIsServed(t *testing.T) {
	e := newEnv(t, options{})
	resp, body := e.do(t, http.MethodGet, "/portal/", nil, nil)
	if resp.StatusCode != http.StatusUnauthorized || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/html") ||
		!strings.Contains(resp.Header.Get("Content-Security-Policy"), "frame-ancestors 'none'") || resp.Header.Get(reqstate.IDHeader) == "" ||
		!strings.Contains(string(body), "Request id: <code>"+resp.Header.Get(reqstate.IDHeader)) {
		t.Fatalf("%d %v:\n%s", resp.StatusCode, resp.Header, body)
	}
	if md, _ := e.workspaces.received(); md != nil {
		t.Fatalf("the backend was called: %v", md)
	}
	if logs := e.logs.String(); !strings.Contains(logs, "path=/portal/ route=/portal/ status=401") {
		t.Fatalf("logs: %s", logs)
	}
	resp, err := noRedirects.Get(e.url + "/portal")
	if err != nil {
		t.Fatal(err)
	}
	_ = resp.Body.Close()
	if resp.StatusCode/100 != 3 || resp.Header.Get("Location") != "/portal/" {
		t.Fatalf("/portal: %d %v", resp.StatusCode, resp.Header)
	}
}

// noRedirects lets a test see a redirect.
var noRedirects = &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}

// Opening a link passes the request's id and the client's address on, as
// every call of the gateway does, sets the session's cookie, and leaves
// the link's secret out of the log.
func TestOpeningAPortalLinkThroughTheGateway(t *testing.T) {
	e := newEnv(t, options{})
	const secret = "bGluay1zZWNyZXQtb2YtdGhlLWdhdGV3YXktdGVzdA"
	req, err := http.NewRequest(http.MethodPost, e.url+"/portal/open/"+secret, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Sec-Fetch-Site", "same-origin")
	req.Header.Set(reqstate.IDHeader, "req-open-1")
	resp, err := noRedirects.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	_ = resp.Body.Close()
	if resp.StatusCode != http.StatusSeeOther || !strings.HasPrefix(resp.Header.Get("Set-Cookie"), "portal_session=portal-token; Path=/portal;") {
		t.Fatalf("%d %v", resp.StatusCode, resp.Header)
	}
	md, _ := e.workspaces.received()
	if got := md.Get(reqstate.IDMetadata); len(got) != 1 || got[0] != "req-open-1" {
		t.Errorf("request id %v", got)
	}
	if got := md.Get(clientaddr.ForwardedFor); len(got) != 1 || got[0] != "127.0.0.1" {
		t.Errorf("client address %v", got)
	}
	logs := e.logs.String()
	if strings.Contains(logs, secret) || !strings.Contains(logs, "path=/portal/open/… route=/portal/open/{secret} status=303") {
		t.Fatalf("logs: %s", logs)
	}
}
