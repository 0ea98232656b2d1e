package e2e

import (
	"html"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
)

// The requests and answers of launches without cookies, as a browser's
// pages make them, each held to the served OpenAPI document: a login with
// lti_storage_target (200, the page that stores state and nonce in the
// platform), a framed login (200, the page that probes for cookies), a
// malformed lti_storage_target (400), the launch of a storage login (200,
// the page that reads them back), its re-post from another site (401) and
// from its own page (200, LiveProctor).
func TestLTI13StorageExchangesAreDocumented(t *testing.T) {
	p, s, workspace, launches := setUpLTI13(t)
	p = p.withT(t)
	var login loginInitiation
	p.control(http.MethodPost, "/control/login", map[string]string{
		"client_id": launches[0].clientID, "deployment_id": "dep-1", "lti_storage_target": "_parent",
	}, &login)
	p.Next(launchOverrides{Claims: map[string]any{customClaim: map[string]any{"exam_config_id": "6f1d2c3b-4a5e-4f60-8a7b-9c0d1e2f3a4b"}}})

	status, page := documentedGet(t, login.URL, nil)
	if status != http.StatusOK || !strings.Contains(page, `id="lti-storage"`) {
		t.Fatalf("the storage login: %d\n%s", status, page)
	}
	redirect := html.UnescapeString(between(page, `data-redirect="`, `"`))
	state, nonce := html.UnescapeString(between(page, `data-state="`, `"`)), html.UnescapeString(between(page, `data-nonce="`, `"`))
	if redirect == "" || state == "" || nonce == "" {
		t.Fatalf("the storage page names no redirect, state or nonce:\n%s", page)
	}

	framed := p.Login(launches[1].clientID, "dep-1")
	if status, page := documentedGet(t, framed.URL, http.Header{"Sec-Fetch-Dest": {"iframe"}}); status != http.StatusOK ||
		!strings.Contains(page, `id="lti-storage"`) {
		t.Fatalf("the framed login: %d\n%s", status, page)
	}
	bad := strings.Replace(login.URL, "lti_storage_target=_parent", "lti_storage_target=not+a+frame", 1)
	if status, page := documentedGet(t, bad, nil); status != http.StatusBadRequest {
		t.Fatalf("a malformed lti_storage_target: %d\n%s", status, page)
	}

	a := p.Authorize(redirect)
	if a.Status != http.StatusOK || a.State != state {
		t.Fatalf("the platform's answer: %+v", a)
	}
	b := newLaunchBrowser(t)
	form := url.Values{"id_token": {a.IDToken}, "state": {a.State}}
	if status, page := b.post(a.Action, form); status != http.StatusOK || !strings.Contains(page, `data-mode="launch"`) {
		t.Fatalf("the storage launch's first post: %d\n%s", status, page)
	}
	form.Set("lti_storage_state", state)
	form.Set("lti_storage_nonce", nonce)
	if status, page := b.post(a.Action, form); status != http.StatusUnauthorized {
		t.Fatalf("storage values posted from another site: %d\n%s", status, page)
	}
	b.http.Transport = sameOrigin{}
	status, page = b.post(a.Action, form)
	if status != http.StatusOK || launchWorkspace(t, s, page) != workspace {
		t.Fatalf("storage values posted by the launch page: %d\n%s", status, page)
	}
}

// sameOrigin sends requests as a page of the tool's own origin does.
type sameOrigin struct{}

func (sameOrigin) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Sec-Fetch-Site", "same-origin")
	return http.DefaultTransport.RoundTrip(r)
}

// documentedGet sends a GET as a browser would, following no redirect, and
// holds the exchange to the served document.
func documentedGet(t *testing.T, target string, header http.Header) (int, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, target, nil)
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range header {
		req.Header[k] = v
	}
	client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	apiDoc.check(t, req, resp.StatusCode, resp.Header, body)
	return resp.StatusCode, string(body)
}
