package e2e

import (
	"crypto/sha256"
	"encoding/base64"
	"html"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/liveproctor/workspaces/deploy/local/stack"
	"github.com/liveproctor/workspaces/pkg/jose"
	"github.com/liveproctor/workspaces/pkg/testenv"
)

const customClaim = "https://purl.imsglobal.org/spec/lti/claim/custom"

// startLTI13Stack starts a stack of the test's own whose tool URLs
// (PUBLIC_BASE_URL) are its gateway's, and which may reach the platform at
// platformURL over http on loopback (LTI_ALLOW_INSECURE_HOSTS), with extra
// settings.
func startLTI13Stack(t *testing.T, platformURL string, extra ...string) *stack.Stack {
	t.Helper()
	addr, err := testenv.FreeAddr()
	if err != nil {
		t.Fatal(err)
	}
	u, err := url.Parse(platformURL)
	if err != nil {
		t.Fatal(err)
	}
	return startOwnStackAt(t, addr, append([]string{"PUBLIC_BASE_URL=http://" + addr, "LTI_ALLOW_INSECURE_HOSTS=" + u.Host}, extra...)...)
}

// loopbackJar keeps cookies as a browser does on http://127.0.0.1, which
// it takes for a secure context: Secure cookies included (Go's jar sends
// those over https only).
type loopbackJar struct{ jar *cookiejar.Jar }

func (j loopbackJar) SetCookies(u *url.URL, cookies []*http.Cookie) {
	j.jar.SetCookies(asHTTPS(u), cookies)
}

func (j loopbackJar) Cookies(u *url.URL) []*http.Cookie {
	return j.jar.Cookies(asHTTPS(u))
}

func asHTTPS(u *url.URL) *url.URL {
	s := *u
	s.Scheme = "https"
	return &s
}

// launchBrowser is one user's browser: its own cookies, no redirects
// followed, so that the test sees each step of a launch.
type launchBrowser struct {
	t    *testing.T
	http *http.Client
	jar  loopbackJar
}

func newLaunchBrowser(t *testing.T) *launchBrowser {
	jar, err := cookiejar.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	b := &launchBrowser{t: t, jar: loopbackJar{jar}}
	b.http = &http.Client{Jar: b.jar, Timeout: 30 * time.Second,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	return b
}

// login opens the tool's login initiation URL and returns where the tool
// sends the browser: the platform's authentication request.
func (b *launchBrowser) login(loginURL string) string {
	b.t.Helper()
	resp, err := b.http.Get(loginURL)
	if err != nil {
		b.t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusFound {
		b.t.Fatalf("GET %s: %s\n%s", loginURL, resp.Status, body)
	}
	return resp.Header.Get("Location")
}

// post sends form to target, as the platform's auto-posting form does,
// with extra cookies beside the jar's, and holds the answer to the
// document.
func (b *launchBrowser) post(target string, form url.Values, extra ...*http.Cookie) (int, string) {
	b.t.Helper()
	return b.postWith(target, form, nil, extra...)
}

// postWith is post with the headers of header too.
func (b *launchBrowser) postWith(target string, form url.Values, header http.Header, extra ...*http.Cookie) (int, string) {
	b.t.Helper()
	req, err := http.NewRequest(http.MethodPost, target, strings.NewReader(form.Encode()))
	if err != nil {
		b.t.Fatal(err)
	}
	for name, values := range header {
		req.Header[name] = values
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	for _, c := range extra {
		req.AddCookie(c)
	}
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

// stateCookies are the state cookies the browser holds for the tool.
func (b *launchBrowser) stateCookies(tool string) []string {
	u, _ := url.Parse(tool + "/lti/v1p3/launch")
	var names []string
	for _, c := range b.jar.Cookies(u) {
		if strings.HasPrefix(c.Name, "lti1p3_state_") {
			names = append(names, c.Name)
		}
	}
	return names
}

// stateCookie is the cookie a login sets for state, as the contract of the
// login and the launch names it.
func stateCookie(state string) *http.Cookie {
	sum := sha256.Sum256([]byte(state))
	return &http.Cookie{Name: "lti1p3_state_" + base64.RawURLEncoding.EncodeToString(sum[:])[:16], Value: state}
}

// lti13Launches drives launches of one platform client through the tool.
type lti13Launches struct {
	t        *testing.T
	platform *platform
	clientID string
}

// start runs a launch up to the platform's form post: the login
// initiation in b, the platform's answer (shaped by o) to the
// authentication request the tool sent b to.
func (l lti13Launches) start(b *launchBrowser, o launchOverrides) (string, url.Values) {
	l.t.Helper()
	p := l.platform.withT(l.t)
	p.Next(o)
	a := p.Authorize(b.login(p.Login(l.clientID, "dep-1").URL))
	if a.Status != http.StatusOK {
		l.t.Fatalf("the platform refused the authentication request: %+v", a)
	}
	return a.Action, url.Values{"id_token": {a.IDToken}, "state": {a.State}}
}

// A platform (tools/lti-platform, npm jose) launches the tool: the login
// initiation, the platform's authentication, and the form post open the
// page with the user and the exam, and a token the session route takes;
// replays, another browser's state, a stolen state posted with storage
// fields (which leaves the login to its browser), an unsigned token and a
// kid the tool's copy of the platform's keys lacks are refused with pages;
// the tool's keys are published.
func TestLTI13LaunchFromAPlatform(t *testing.T) {
	const exam = "7c9e6679-7425-40de-944b-e07fc1f90ae7"
	p, s, workspaceID, clients := setUpLTI13(t)
	tool := s.GatewayURL
	launches := clients[0]
	withExam := launchOverrides{Claims: map[string]any{customClaim: map[string]any{"exam_config_id": exam}}}
	alice, bob := newLaunchBrowser(t), newLaunchBrowser(t)

	action, form := launches.start(alice, withExam)
	status, page := alice.post(action, form)
	if status != http.StatusOK || !strings.Contains(page, `data-exam-config-id="`+exam+`"`) || !strings.Contains(page, `data-email="ada@school.example"`) {
		t.Fatalf("the launch: %d\n%s", status, page)
	}
	var got sdkSession
	anonymous(t).on(s).do(http.MethodGet, "/api/sdk/session", nil, "Authorization", "Bearer "+html.UnescapeString(between(page, `data-auth="`, `"`))).ok(&got)
	if got.Email != "ada@school.example" || got.WorkspaceID != workspaceID {
		t.Fatalf("the launch's session: %+v", got)
	}
	if left := alice.stateCookies(tool); len(left) != 0 {
		t.Fatalf("the state's cookie outlived its launch: %v", left)
	}

	refused := func(name string, b *launchBrowser, action string, form url.Values, want int, words string, extra ...*http.Cookie) {
		t.Helper()
		status, page := b.post(action, form, extra...)
		if status != want || !strings.Contains(html.UnescapeString(page), words) || strings.Contains(page, "data-auth") {
			t.Errorf("%s: %d, want %d saying %q:\n%s", name, status, want, words, page)
		}
	}
	refused("the launch posted again", alice, action, form, http.StatusUnauthorized, "not this browser's")
	refused("the launch posted again with its cookie", alice, action, form, http.StatusUnauthorized, "already used", stateCookie(form.Get("state")))

	// Bob's launch posted from Alice's browser is refused and leaves Bob's
	// login for Bob.
	bobAction, bobForm := launches.start(bob, withExam)
	refused("another browser's state", alice, bobAction, bobForm, http.StatusUnauthorized, "not this browser's")
	if status, page := bob.post(bobAction, bobForm); status != http.StatusOK {
		t.Errorf("Bob's own launch after Alice posted it: %d\n%s", status, page)
	}

	// Whoever learns Bob's state (it travels in URLs to the platform) and
	// posts it as if read back from the platform's storage, with the
	// header a browser would not let another site send, is refused, and
	// leaves Bob's login for Bob.
	bobAction, bobForm = launches.start(bob, withExam)
	mallory := newLaunchBrowser(t)
	stolen := url.Values{"id_token": {"forged"}, "state": bobForm["state"], "lti_storage_state": bobForm["state"], "lti_storage_nonce": {"a guess"}}
	status, page = mallory.postWith(bobAction, stolen, http.Header{"Sec-Fetch-Site": {"same-origin"}})
	if status != http.StatusUnauthorized || !strings.Contains(html.UnescapeString(page), "did not keep it there") || strings.Contains(page, "data-auth") {
		t.Errorf("a stolen state with storage fields: %d, want 401 saying the login kept no storage:\n%s", status, page)
	}
	if status, page := bob.post(bobAction, bobForm); status != http.StatusOK || !strings.Contains(page, `data-exam-config-id="`+exam+`"`) {
		t.Errorf("Bob's own launch after a stolen post of his state: %d\n%s", status, page)
	}

	action, form = launches.start(alice, launchOverrides{SignWith: "none"})
	refused("an unsigned id_token (alg none)", alice, action, form, http.StatusUnauthorized, "RS256")

	action, form = launches.start(alice, launchOverrides{MessageType: "LtiDeepLinkingRequest"})
	if status, page := alice.post(action, form); status != http.StatusOK || !strings.Contains(page, `name="exam_config_id"`) {
		t.Errorf("a deep-linking launch: %d\n%s", status, page)
	}

	wantToolKeys(t, tool)

	// The platform rotates its key within 30 s of the tool's first fetch
	// of its keys for the second client: the tool refetches at most once
	// per 30 s, so the new kid is unknown to it.
	second := clients[1]
	action, form = second.start(alice, withExam)
	if status, page := alice.post(action, form); status != http.StatusOK {
		t.Fatalf("the second client's launch: %d\n%s", status, page)
	}
	p.Rotate(false)
	action, form = second.start(alice, withExam)
	refused("a kid rotated in within 30 s", alice, action, form, http.StatusUnauthorized, "key not found")
}

// setUpLTI13 starts a platform and a stack of the test's own, and
// registers two clients of the platform with a new workspace; extra are
// the stack's further settings.
func setUpLTI13(t *testing.T, extra ...string) (*platform, *stack.Stack, string, [2]lti13Launches) {
	p := startPlatform(t, platformOptions{})
	s := startLTI13Stack(t, p.URL, extra...)
	clients := []platformClient{
		{ClientID: clientID(t, "a"), DeploymentIDs: []string{"dep-1"}},
		{ClientID: clientID(t, "b"), DeploymentIDs: []string{"dep-1"}},
	}
	p.SetClients(s.GatewayURL, clients)
	w := asRoot(t).on(s).create(unique(t, "school"), nil)
	var launches [2]lti13Launches
	for i, c := range clients {
		w.server(t).on(s).register(w.WorkspaceID, map[string]any{
			"issuer": p.Issuer, "clientId": c.ClientID, "deploymentIds": []string{"dep-1"},
			"authLoginUrl": p.URL + "/auth", "jwksUrl": p.URL + "/jwks",
		})
		launches[i] = lti13Launches{t: t, platform: p, clientID: c.ClientID}
	}
	return p, s, w.WorkspaceID, launches
}

// wantToolKeys checks the tool's published keys: a key set pkg/jose takes,
// with a key, that caches may keep an hour.
func wantToolKeys(t *testing.T, tool string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, tool+"/lti/v1p3/jwks.json", nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	apiDoc.check(t, req, resp.StatusCode, resp.Header, body)
	if resp.StatusCode != http.StatusOK || resp.Header.Get("Cache-Control") != "public, max-age=3600" ||
		resp.Header.Get("Content-Type") != "application/json" {
		t.Fatalf("GET %s: %s %v\n%s", req.URL, resp.Status, resp.Header, body)
	}
	if _, err := jose.ParseKeySet(body); err != nil || !strings.Contains(string(body), `"kid"`) {
		t.Fatalf("the tool's key set %s: %v", body, err)
	}
}
