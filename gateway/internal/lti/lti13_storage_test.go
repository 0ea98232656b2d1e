package lti

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"html"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"

	"google.golang.org/grpc"
	"google.golang.org/grpc/metadata"

	authv1 "github.com/liveproctor/workspaces/pkg/gen/auth/v1"
	workspacev1 "github.com/liveproctor/workspaces/pkg/gen/workspace/v1"
	"github.com/liveproctor/workspaces/pkg/ltistorage"
)

// storageState is a state of a login with platform storage: the secret,
// then "_parent" and "https://lms.example.edu", each base64url.
const storageState = loginState + ".X3BhcmVudA.aHR0cHM6Ly9sbXMuZXhhbXBsZS5lZHU"

// storageStarter answers every login as one with platform storage.
type storageStarter struct {
	got *workspacev1.StartLti13LoginRequest
}

func (s *storageStarter) StartLti13Login(_ context.Context, in *workspacev1.StartLti13LoginRequest, _ ...grpc.CallOption) (*workspacev1.Lti13LoginRedirect, error) {
	s.got = in
	return &workspacev1.Lti13LoginRedirect{
		RedirectUrl: loginRedirect, State: storageState, StateTtlSeconds: 3600, Nonce: "n-1",
		LtiStorageTarget: in.GetLtiStorageTarget(), PlatformOrigin: "https://lms.example.edu",
	}, nil
}

// serveLogin sends a GET login initiation with the headers given.
func serveLogin(s LTI13LoginStarter, query string, header map[string]string) *httptest.ResponseRecorder {
	noMetadata := func(context.Context, *http.Request) metadata.MD { return nil }
	r := httptest.NewRequest(http.MethodGet, LTI13LoginPath+"?"+query, nil)
	for k, v := range header {
		r.Header.Set(k, v)
	}
	w := httptest.NewRecorder()
	LTI13Login(s, noMetadata, 32<<10, slog.New(slog.NewTextHandler(io.Discard, nil)))(w, r, nil)
	return w
}

// dataOf returns the data-* attributes of the storage pages' #lti-storage.
func dataOf(t *testing.T, page string) map[string]string {
	t.Helper()
	m := regexp.MustCompile(`(?s)<main id="lti-storage"(.*?)>`).FindStringSubmatch(page)
	if m == nil {
		t.Fatalf("no #lti-storage in:\n%s", page)
	}
	out := map[string]string{}
	for _, a := range regexp.MustCompile(`data-([a-z-]+)="([^"]*)"`).FindAllStringSubmatch(m[1], -1) {
		out[a[1]] = html.UnescapeString(a[2])
	}
	return out
}

// checkStoragePage checks what every storage page carries: no caching,
// and a policy that runs its one inline script, by its hash, and no other.
func checkStoragePage(t *testing.T, w *httptest.ResponseRecorder) {
	t.Helper()
	if w.Code != http.StatusOK || w.Header().Get("Cache-Control") != "no-store" || w.Header().Get("Referrer-Policy") != "no-referrer" {
		t.Fatalf("%d %v", w.Code, w.Header())
	}
	scripts := regexp.MustCompile(`(?s)<script>(.*?)</script>`).FindAllStringSubmatch(w.Body.String(), -1)
	if len(scripts) != 1 {
		t.Fatalf("%d inline scripts", len(scripts))
	}
	sum := sha256.Sum256([]byte(scripts[0][1]))
	want := "script-src 'sha256-" + base64.StdEncoding.EncodeToString(sum[:]) + "';"
	if csp := w.Header().Get("Content-Security-Policy"); !strings.Contains(csp, want) || strings.Contains(csp, "unsafe-inline'; base") == false {
		t.Fatalf("CSP %q, want %q", csp, want)
	}
}

// A login with lti_storage_target answers the page that puts the state
// and nonce in the named frame at the platform's origin, then goes to the
// authorization endpoint; it sets no cookie, and its fallback is the same
// login without storage.
func TestLTI13LoginWithPlatformStorage(t *testing.T) {
	s := &storageStarter{}
	w := serveLogin(s, canvasLoginForm+"&lti_storage_target=_parent", nil)
	checkStoragePage(t, w)
	if s.got.GetLtiStorageTarget() != "_parent" || s.got.GetIssuer() != "https://canvas.instructure.com" {
		t.Fatalf("asked %v", s.got)
	}
	if c := w.Header().Values("Set-Cookie"); len(c) != 0 {
		t.Fatalf("Set-Cookie %q", c)
	}
	d := dataOf(t, w.Body.String())
	want := map[string]string{
		"mode": "login", "target": "_parent", "origin": "https://lms.example.edu", "state": storageState, "nonce": "n-1",
		"redirect": loginRedirect, "fallback": LTI13LoginPath + "?" + canvasLoginForm + "&lti1p3_storage_failed=1",
	}
	for k, v := range want {
		if d[k] != v {
			t.Errorf("data-%s = %q, want %q", k, d[k], v)
		}
	}
}

// A login in a frame keeps the state cookie, and answers a page that goes
// on if the frame keeps its probe cookie, else asks the platform for
// storage (unless it is the login a failed storage started again) or
// offers the same login in a new window; elsewhere the login redirects.
func TestLTI13LoginFramed(t *testing.T) {
	framed := map[string]string{"Sec-Fetch-Dest": "iframe", "Sec-Fetch-Site": "cross-site"}
	w := serveLogin(&loginStarter{}, canvasLoginForm, framed)
	checkStoragePage(t, w)
	cookies := strings.Join(w.Header().Values("Set-Cookie"), "\n")
	if !strings.Contains(cookies, StateCookieName(loginState)+"="+loginState) ||
		!strings.Contains(cookies, "lti1p3_probe=1; Path=/lti/v1p3/login; Max-Age=60; Secure; SameSite=None; Partitioned") {
		t.Fatalf("Set-Cookie:\n%s", cookies)
	}
	d := dataOf(t, w.Body.String())
	if d["mode"] != "probe" || d["probe-cookie"] != probeCookieName || d["redirect"] != loginRedirect || d["capabilities"] != "on" {
		t.Fatalf("data %v", d)
	}
	again := serveLogin(&loginStarter{}, canvasLoginForm+"&lti1p3_storage_failed=1", map[string]string{"Sec-Fetch-Dest": "iframe", "Sec-Fetch-Site": "same-origin"})
	if d := dataOf(t, again.Body.String()); d["mode"] != "probe" || d["capabilities"] != "" {
		t.Fatalf("the login again after storage failed: data %v", d)
	}
	link := regexp.MustCompile(`<a id="new-window-link" href="([^"]*)" target="_blank"`).FindStringSubmatch(w.Body.String())
	if link == nil || html.UnescapeString(link[1]) != LTI13LoginPath+"?"+canvasLoginForm {
		t.Fatalf("new-window link %q", link)
	}
	for _, header := range []map[string]string{
		{"Sec-Fetch-Dest": "document", "Sec-Fetch-Site": "cross-site"},
		nil,
	} {
		if w := serveLogin(&loginStarter{}, canvasLoginForm, header); w.Code != http.StatusFound {
			t.Errorf("%v: %d", header, w.Code)
		}
	}
}

// The login a new window opens, or a failed storage falls back to, is the
// initiation as sent, every parameter kept but lti_storage_target.
func TestLoginWithoutStorage(t *testing.T) {
	params := []*authv1.LtiParameter{
		{Name: "iss", Value: "https://lms.example.edu/a b"}, {Name: "lti_storage_target", Value: "_parent"},
		{Name: "canvas_region", Value: "us&east"}, {Name: "login_hint", Value: "é"},
	}
	want := "/lti/v1p3/login?iss=https%3A%2F%2Flms.example.edu%2Fa+b&canvas_region=us%26east&login_hint=%C3%A9"
	if got := loginWithoutStorage(params); got != want {
		t.Fatalf("got %s\nwant %s", got, want)
	}
}

// A state names its storage only when it is three parts that read as a
// frame's name and an origin; anything else is a cookie's state.
func TestStorageOfState(t *testing.T) {
	enc := func(s string) string { return base64.RawURLEncoding.EncodeToString([]byte(s)) }
	if target, origin, ok := ltistorage.ParseState(storageState); !ok || target != "_parent" || origin != "https://lms.example.edu" {
		t.Fatalf("%q %q %v", target, origin, ok)
	}
	for _, bad := range []string{
		loginState,
		loginState + "." + enc("_parent"),
		"." + enc("_parent") + "." + enc("https://lms.example.edu"),
		loginState + "." + enc("a frame") + "." + enc("https://lms.example.edu"),
		loginState + "." + enc("_parent") + "." + enc("https://lms.example.edu/auth"),
		loginState + "." + enc("_parent") + "." + enc("javascript:alert(1)"),
		loginState + ".%%." + enc("https://lms.example.edu"),
	} {
		if _, _, ok := ltistorage.ParseState(bad); ok {
			t.Errorf("%q names a storage", bad)
		}
	}
}

// A launch of a login with platform storage first gets the page that reads
// the state and nonce back from the frame the state names; that page's
// post, same-origin, carries them to the services; another site's post of
// such values is refused before any service is asked.
func TestLTI13LaunchThroughPlatformStorage(t *testing.T) {
	claims := base64.RawURLEncoding.EncodeToString([]byte(`{"nonce":"n-1","iss":"x"}`))
	token := "e30." + claims + ".c2ln"
	s := &lti13Sessions{session: &authv1.LtiSession{Auth: "dG9rZW4=", Email: "ada@example.com", MessageType: "LtiResourceLinkRequest",
		CustomParameters: []*authv1.LtiParameter{{Name: "custom_exam_config_id", Value: exam13}}}}
	w := post13(s, formType13, "id_token="+token+"&state="+storageState)
	checkStoragePage(t, w)
	if s.got != nil {
		t.Fatalf("asked the services before reading the storage: %v", s.got)
	}
	d := dataOf(t, w.Body.String())
	if d["mode"] != "launch" || d["target"] != "_parent" || d["origin"] != "https://lms.example.edu" || d["state"] != storageState || d["nonce"] != "n-1" {
		t.Fatalf("data %v", d)
	}
	for _, field := range []string{`name="id_token" value="` + token + `"`, `name="lti_storage_state"`, `action="/lti/v1p3/launch"`} {
		if !strings.Contains(w.Body.String(), field) {
			t.Fatalf("the form lacks %s:\n%s", field, w.Body)
		}
	}

	body := "id_token=" + token + "&state=" + storageState + "&lti_storage_state=" + storageState + "&lti_storage_nonce=n-1"
	r := httptest.NewRequest(http.MethodPost, LTI13LaunchPath, strings.NewReader(body))
	r.Header.Set("Content-Type", formType13)
	r.Header.Set("Sec-Fetch-Site", "same-origin")
	w = httptest.NewRecorder()
	LTI13Launch(s, noMetadata13, 32<<10, quiet13())(w, r, nil)
	if w.Code != http.StatusOK || !strings.Contains(w.Body.String(), `data-auth="dG9rZW4="`) {
		t.Fatalf("%d:\n%s", w.Code, w.Body)
	}
	if s.got.GetBrowserState() != storageState || s.got.GetBrowserNonce() != "n-1" || !s.got.GetFromPlatformStorage() || s.got.GetState() != storageState {
		t.Fatalf("asked %v", s.got)
	}

	for _, site := range []string{"cross-site", "same-site", ""} {
		s.got = nil
		r := httptest.NewRequest(http.MethodPost, LTI13LaunchPath, strings.NewReader(body))
		r.Header.Set("Content-Type", formType13)
		if site != "" {
			r.Header.Set("Sec-Fetch-Site", site)
		}
		w := httptest.NewRecorder()
		LTI13Launch(s, noMetadata13, 32<<10, quiet13())(w, r, nil)
		if w.Code != http.StatusUnauthorized || !strings.Contains(w.Body.String(), "own launch page") || s.got != nil {
			t.Errorf("posted %q: %d, asked %v:\n%s", site, w.Code, s.got, w.Body)
		}
	}
}

func TestTokenNonce(t *testing.T) {
	enc := func(s string) string { return base64.RawURLEncoding.EncodeToString([]byte(s)) }
	for token, want := range map[string]string{
		"e30." + enc(`{"nonce":"abc"}`) + ".x": "abc",
		"e30." + enc(`{"nonce":1}`) + ".x":     "",
		"e30." + enc(`{}`) + ".x":              "",
		"e30.%%.x":                             "",
		"a.b":                                  "",
	} {
		if got := tokenNonce(token); got != want {
			t.Errorf("tokenNonce(%q) = %q, want %q", token, got, want)
		}
	}
}
