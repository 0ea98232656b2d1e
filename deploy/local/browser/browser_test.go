package browser_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/liveproctor/workspaces/deploy/local/browser"
	"github.com/liveproctor/workspaces/pkg/testenv"
)

// sdkScript is the gateway's SDK, read from its source tree: this module
// cannot import the gateway's internal packages.
const sdkScript = "../../../gateway/internal/sdk/static/sdk.js"

const examConfigID = "0F8FAD5B-d9cb-469f-a165-70867728950e"

// fakeAPI stands in for the gateway: it serves sdk.js and GET
// /api/sdk/session with CORS, and counts the session requests.
type fakeAPI struct {
	script   []byte
	requests atomic.Int64 // every request to /api/sdk/session, preflights included
	gets     atomic.Int64

	mu      sync.Mutex
	revoked map[string]bool
}

type session struct {
	Email       string `json:"email"`
	WorkspaceID string `json:"workspaceId"`
	ExpiresAt   string `json:"expiresAt"`
}

// sessionFor answers for the tokens the tests use.
func (f *fakeAPI) sessionFor(token string) (session, bool) {
	f.mu.Lock()
	revoked := f.revoked[token]
	f.mu.Unlock()
	if revoked {
		return session{}, false
	}
	now := time.Now().UTC()
	switch token {
	case "good", "revocable":
		return session{"ada@example.com", "ws-1", now.Add(8 * time.Hour).Format(time.RFC3339)}, true
	case "short":
		return session{"short@example.com", "ws-2", now.Add(2 * time.Second).Format(time.RFC3339Nano)}, true
	case "html":
		return session{`<img src=x onerror="window.pwned=1">@example.com`, `<b>ws</b>`, now.Add(time.Hour).Format(time.RFC3339)}, true
	}
	return session{}, false
}

func (f *fakeAPI) revoke(token string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.revoked[token] = true
}

func (f *fakeAPI) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	switch r.URL.Path {
	case "/sdk/v1/sdk.js":
		w.Header().Set("Content-Type", "application/javascript; charset=utf-8")
		_, _ = w.Write(f.script)
		return
	case "/api/sdk/session":
	default:
		http.NotFound(w, r)
		return
	}
	f.requests.Add(1)
	h := w.Header()
	if origin := r.Header.Get("Origin"); origin != "" {
		h.Set("Access-Control-Allow-Origin", origin)
		h.Set("Vary", "Origin")
		h.Set("Access-Control-Allow-Headers", "Authorization, Content-Type, X-Request-Id")
		h.Set("Access-Control-Allow-Methods", "GET, DELETE, OPTIONS")
		h.Set("Access-Control-Expose-Headers", "X-Request-Id")
	}
	h.Set("X-Request-Id", "req-1")
	switch r.Method {
	case http.MethodOptions:
		w.WriteHeader(http.StatusNoContent)
		return
	case http.MethodGet:
	default:
		w.WriteHeader(http.StatusMethodNotAllowed)
		return
	}
	f.gets.Add(1)
	h.Set("Content-Type", "application/json")
	token, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	s, valid := f.sessionFor(token)
	if !ok || !valid || r.Header.Get("Cookie") != "" {
		w.WriteHeader(http.StatusUnauthorized)
		_, _ = fmt.Fprint(w, `{"error":{"code":401,"status":"UNAUTHENTICATED","message":"the SDK token is not valid","requestId":"req-1","details":[]}}`)
		return
	}
	_ = json.NewEncoder(w).Encode(s)
}

// page is the test page, on another origin than the API. It loads sdk.js
// from the API's origin and leaves baseUrl to default to it.
const page = `<!DOCTYPE html>
<html><head><meta charset="utf-8"><title>sdk test</title>
<script src="%s/sdk/v1/sdk.js"></script></head>
<body>
<div id="good"></div><div id="good2"></div><div id="forged"></div><div id="uuid"></div>
<div id="short"></div><div id="revocable"></div><div id="html"></div>
<script>
window.seen = [];
document.addEventListener('liveproctor:ready', (e) => seen.push('dom:ready:' + e.target.id));
document.addEventListener('liveproctor:error', (e) => seen.push('dom:error:' + e.target.id));
document.addEventListener('liveproctor:expired', (e) => seen.push('dom:expired:' + e.target.id));

// launch starts a component and settles with what happened.
window.launch = async (id, auth, examConfigId, options) => {
  const lp = WorkspaceSDK.LiveProctor(id, Object.assign({ auth }, options || {})); // without new
  const events = [];
  let expired;
  const expiredP = new Promise((resolve) => { expired = resolve; });
  lp.on('ready', (s) => events.push('ready:' + s.email));
  lp.on('error', (e) => events.push('error:' + e.code));
  lp.on('expired', (s) => { events.push('expired:' + s.email); expired(s); });
  window['lp_' + id] = lp;
  window['expired_' + id] = expiredP;
  window['events_' + id] = events;
  try {
    const session = await lp.init({ examConfigId });
    return { ok: true, session, events, instance: lp instanceof WorkspaceSDK.LiveProctor };
  } catch (e) {
    return { ok: false, code: e.code, message: e.message, isError: e instanceof Error, events };
  }
};

window.waitExpired = (id, ms) => Promise.race([
  window['expired_' + id].then(() => window['events_' + id]),
  new Promise((_, reject) => setTimeout(() => reject(new Error('no expired event')), ms)),
]);
</script></body></html>`

type launchResult struct {
	OK       bool              `json:"ok"`
	Session  map[string]string `json:"session"`
	Code     string            `json:"code"`
	Message  string            `json:"message"`
	IsError  bool              `json:"isError"`
	Instance bool              `json:"instance"`
	Events   []string          `json:"events"`
}

func launch(ctx context.Context, t *testing.T, p *browser.Page, id, auth, exam, options string) launchResult {
	t.Helper()
	if options == "" {
		options = "{}"
	}
	var r launchResult
	expr := fmt.Sprintf("launch(%q, %q, %q, %s)", id, auth, exam, options)
	if err := p.Evaluate(ctx, expr, &r); err != nil {
		t.Fatalf("%s: %v\n%s", expr, err, strings.Join(p.Log(), "\n"))
	}
	return r
}

func TestLiveProctorComponent(t *testing.T) {
	script, err := os.ReadFile(sdkScript)
	if err != nil {
		t.Fatal(err)
	}
	api := &fakeAPI{script: script, revoked: map[string]bool{}}
	apiSrv := httptest.NewServer(api)
	defer apiSrv.Close()
	pageSrv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		_, _ = fmt.Fprintf(w, page, apiSrv.URL)
	}))
	defer pageSrv.Close()

	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	b, err := browser.Start(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := b.Close(); err != nil {
			t.Errorf("close: %v", err)
		}
	}()
	p, err := b.Open(ctx, pageSrv.URL+"/")
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	defer func() {
		if t.Failed() {
			t.Logf("page log:\n%s", strings.Join(p.Log(), "\n"))
		}
	}()
	var version string
	if err := p.Evaluate(ctx, "WorkspaceSDK.version", &version); err != nil || version == "" {
		t.Fatalf("WorkspaceSDK.version = %q, %v", version, err)
	}

	text := func(sel string) string {
		t.Helper()
		s, err := p.Text(ctx, sel)
		if err != nil {
			t.Fatalf("%s: %v", sel, err)
		}
		return s
	}
	count := func(sel string) int {
		t.Helper()
		n, err := p.Count(ctx, sel)
		if err != nil {
			t.Fatalf("%s: %v", sel, err)
		}
		return n
	}
	state := func(id string) string {
		t.Helper()
		v, _, err := p.Attribute(ctx, "#"+id, "data-liveproctor-state")
		if err != nil {
			t.Fatal(err)
		}
		return v
	}

	t.Run("valid token renders the session", func(t *testing.T) {
		r := launch(ctx, t, p, "good", "good", examConfigID, "")
		if !r.OK || !r.Instance || r.Session["email"] != "ada@example.com" || r.Session["workspaceId"] != "ws-1" ||
			r.Session["examConfigId"] != examConfigID || r.Session["expiresAt"] == "" {
			t.Fatalf("launch: %+v", r)
		}
		if len(r.Events) != 1 || r.Events[0] != "ready:ada@example.com" {
			t.Errorf("events %v", r.Events)
		}
		for field, want := range map[string]string{
			"email": "ada@example.com", "workspaceId": "ws-1", "examConfigId": examConfigID, "expiresAt": r.Session["expiresAt"],
		} {
			if got := text(`#good [data-liveproctor="session"] [data-field="` + field + `"]`); got != want {
				t.Errorf("%s shows %q, want %q", field, got, want)
			}
		}
		if s := state("good"); s != "ready" {
			t.Errorf("state %q", s)
		}
		// The same token launches a second component.
		r = launch(ctx, t, p, "good2", "good", examConfigID, "")
		if !r.OK || text(`#good2 [data-field="email"]`) != "ada@example.com" || count(`#good [data-liveproctor="session"]`) != 1 {
			t.Errorf("second component: %+v", r)
		}
	})

	t.Run("forged token is rejected", func(t *testing.T) {
		r := launch(ctx, t, p, "forged", "Zm9yZ2Vk", examConfigID, "")
		if r.OK || r.Code != "invalid_token" || !r.IsError {
			t.Fatalf("launch: %+v", r)
		}
		if len(r.Events) != 1 || r.Events[0] != "error:invalid_token" {
			t.Errorf("events %v", r.Events)
		}
		if n := count(`#forged [data-liveproctor="session"]`); n != 0 {
			t.Errorf("%d session blocks after a forged token", n)
		}
		if n := count(`#forged [data-liveproctor="error"]`); n != 1 {
			t.Errorf("%d error messages", n)
		}
	})

	t.Run("non-UUID exam config is rejected without a request", func(t *testing.T) {
		before := api.requests.Load()
		for _, bad := range []string{"", "not-a-uuid", "0f8fad5b-d9cb-469f-a165-70867728950", "0f8fad5bd9cb469fa16570867728950e", "0f8fad5b-d9cb-469f-a165-70867728950g"} {
			r := launch(ctx, t, p, "uuid", "good", bad, "")
			if r.OK || r.Code != "invalid_exam_config" {
				t.Errorf("%q: %+v", bad, r)
			}
		}
		if n := api.requests.Load() - before; n != 0 {
			t.Errorf("%d requests for invalid exam configs", n)
		}
		if n := count(`#uuid [data-liveproctor="session"]`); n != 0 {
			t.Errorf("%d session blocks", n)
		}
		r := launch(ctx, t, p, "missing-element", "good", examConfigID, "")
		if r.OK || r.Code != "element_not_found" {
			t.Errorf("missing element: %+v", r)
		}
	})

	t.Run("session expiry", func(t *testing.T) {
		r := launch(ctx, t, p, "short", "short", examConfigID, "")
		if !r.OK {
			t.Fatalf("launch: %+v", r)
		}
		var events []string
		if err := p.Evaluate(ctx, `waitExpired("short", 10000)`, &events); err != nil {
			t.Fatal(err)
		}
		if len(events) != 2 || events[1] != "expired:short@example.com" {
			t.Errorf("events %v", events)
		}
		if s := state("short"); s != "expired" {
			t.Errorf("state %q", s)
		}
	})

	t.Run("revocation is noticed by the re-check", func(t *testing.T) {
		r := launch(ctx, t, p, "revocable", "revocable", examConfigID, `{recheckInterval: 200}`)
		if !r.OK {
			t.Fatalf("launch: %+v", r)
		}
		before := api.gets.Load()
		testenv.Eventually(t, 10*time.Second, func() error {
			if n := api.gets.Load() - before; n < 2 {
				return fmt.Errorf("%d re-checks", n)
			}
			return nil
		}, "the component re-checks its token")
		if s := state("revocable"); s != "ready" {
			t.Errorf("state %q after re-checks of a valid token", s)
		}
		api.revoke("revocable")
		if err := p.Evaluate(ctx, `waitExpired("revocable", 5000)`, nil); err != nil {
			t.Fatal(err)
		}
		if s := state("revocable"); s != "expired" {
			t.Errorf("state %q", s)
		}
		// destroy stops the checks and empties the element.
		if err := p.Evaluate(ctx, `lp_revocable.destroy()`, nil); err != nil {
			t.Fatal(err)
		}
		if n := count(`#revocable *`); n != 0 {
			t.Errorf("%d elements after destroy", n)
		}
	})

	t.Run("data is rendered as text", func(t *testing.T) {
		r := launch(ctx, t, p, "html", "html", examConfigID, "")
		if !r.OK {
			t.Fatalf("launch: %+v", r)
		}
		if got := text(`#html [data-field="email"]`); !strings.HasPrefix(got, "<img") {
			t.Errorf("email shows %q", got)
		}
		if n := count(`#html img, #html b`); n != 0 {
			t.Errorf("%d elements injected", n)
		}
		var pwned bool
		if err := p.Evaluate(ctx, `!!window.pwned`, &pwned); err != nil || pwned {
			t.Errorf("pwned %v, %v", pwned, err)
		}
	})

	t.Run("DOM events bubble", func(t *testing.T) {
		var seen []string
		if err := p.Evaluate(ctx, `seen`, &seen); err != nil {
			t.Fatal(err)
		}
		want := []string{"dom:ready:good", "dom:error:forged", "dom:expired:short"}
		for _, w := range want {
			found := false
			for _, s := range seen {
				found = found || s == w
			}
			if !found {
				t.Errorf("%s not in %v", w, seen)
			}
		}
	})
}

func TestEnsureInstalled(t *testing.T) {
	// Chromium is a test dependency (make test-deps): its absence fails.
	if err := browser.EnsureInstalled(); err != nil {
		t.Fatal(err)
	}
}

// The helpers a form-driving test uses: typing into a field, a form's
// submission followed to its next page, the window's size, a screenshot.
func TestFormsViewportAndScreenshot(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		if r.Method == http.MethodPost {
			_ = r.ParseForm()
			_, _ = fmt.Fprintf(w, `<!doctype html><meta name="viewport" content="width=device-width"><p id="got">%s</p>`,
				strings.ReplaceAll(r.PostForm.Get("name"), "<", "&lt;"))
			return
		}
		_, _ = fmt.Fprint(w, `<!doctype html><meta name="viewport" content="width=device-width">`+
			`<form method="post" action="/sent"><label>Name <input id="name" name="name" value="old"></label>`+
			`<button id="send">Send</button></form>`)
	}))
	defer srv.Close()

	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	b, err := browser.Start(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = b.Close() }()
	p, err := b.Open(ctx, "about:blank")
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Viewport(ctx, 390, 844, true); err != nil {
		t.Fatal(err)
	}
	if err := p.Navigate(ctx, srv.URL+"/form"); err != nil {
		t.Fatal(err)
	}
	var width int
	if err := p.Evaluate(ctx, "window.innerWidth", &width); err != nil || width != 390 {
		t.Fatalf("innerWidth = %d, %v; want 390", width, err)
	}
	if err := p.Fill(ctx, "#name", "Ada <Lovelace>"); err != nil {
		t.Fatal(err)
	}
	if err := p.Click(ctx, "#send"); err != nil {
		t.Fatal(err)
	}
	got, err := p.Text(ctx, "#got")
	if err != nil || got != "Ada <Lovelace>" {
		t.Fatalf("posted name = %q, %v; want the typed value alone", got, err)
	}
	if loc, err := p.Location(ctx); err != nil || loc != srv.URL+"/sent" {
		t.Errorf("location = %q, %v; want %s/sent", loc, err, srv.URL)
	}
	png, err := p.Screenshot(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(string(png), "\x89PNG\r\n\x1a\n") {
		t.Errorf("screenshot starts %q, want a PNG", png[:min(8, len(png))])
	}
}

// A page's log holds the violations of its Content-Security-Policy, as
// the browser reports them; a copy button's value can be read back from
// the clipboard once the page's origin may read it.
func TestLogAndClipboard(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Security-Policy", "default-src 'none'; script-src 'self'")
		if r.URL.Path == "/copy.js" {
			w.Header().Set("Content-Type", "application/javascript")
			_, _ = fmt.Fprint(w, `document.getElementById("copy").addEventListener("click", function () {
  navigator.clipboard.writeText("copied value").then(function () { document.getElementById("done").textContent = "yes"; });
});`)
			return
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		_, _ = fmt.Fprint(w, `<!doctype html><button id="copy">Copy</button><p id="done"></p>`+
			`<script>window.inline = true</script><script src="/copy.js"></script>`)
	}))
	defer srv.Close()

	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	b, err := browser.Start(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = b.Close() }()
	if err := b.AllowClipboardRead(ctx, srv.URL); err != nil {
		t.Fatal(err)
	}
	p, err := b.Open(ctx, srv.URL+"/")
	if err != nil {
		t.Fatal(err)
	}
	var ran bool
	if err := p.Evaluate(ctx, "window.inline === true", &ran); err != nil || ran {
		t.Fatalf("the inline script ran (%v) despite the policy", err)
	}
	if log := strings.Join(p.Log(), "\n"); !strings.Contains(log, "log.error security: ") || !strings.Contains(log, "Content Security Policy") {
		t.Errorf("the log does not report the blocked inline script:\n%s", log)
	}
	if err := p.Click(ctx, "#copy"); err != nil {
		t.Fatal(err)
	}
	// The page says when the clipboard took the value.
	const copied = `new Promise((resolve) => {
  const done = document.getElementById("done");
  if (done.textContent) { resolve(done.textContent); }
  new MutationObserver(() => resolve(done.textContent)).observe(done, { childList: true });
})`
	var done string
	if err := p.Evaluate(ctx, copied, &done); err != nil || done != "yes" {
		t.Fatalf("the copy did not finish: %q, %v\n%s", done, err, strings.Join(p.Log(), "\n"))
	}
	var clip string
	if err := p.Evaluate(ctx, "navigator.clipboard.readText()", &clip); err != nil || clip != "copied value" {
		t.Errorf("the clipboard holds %q (%v), want the copied value", clip, err)
	}
}

// The browser's cookies for a URL, HttpOnly ones included, with their
// attributes; a cookie of another path is not among them.
func TestCookies(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.SetCookie(w, &http.Cookie{Name: "kept", Value: "v1", Path: "/app", MaxAge: 3600, HttpOnly: true, Secure: true, SameSite: http.SameSiteLaxMode})
		http.SetCookie(w, &http.Cookie{Name: "elsewhere", Value: "v2", Path: "/other"})
		_, _ = fmt.Fprint(w, `<!doctype html><p>set</p>`)
	}))
	defer srv.Close()

	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	b, err := browser.Start(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = b.Close() }()
	p, err := b.Open(ctx, srv.URL+"/app/")
	if err != nil {
		t.Fatal(err)
	}
	cookies, err := p.Cookies(ctx, srv.URL+"/app/page")
	if err != nil {
		t.Fatal(err)
	}
	if len(cookies) != 1 {
		t.Fatalf("cookies %v, want the one of /app", cookies)
	}
	c := cookies[0]
	if c.Name != "kept" || c.Value != "v1" || c.Path != "/app" || !c.HttpOnly || !c.Secure || c.SameSite != http.SameSiteLaxMode ||
		time.Until(c.Expires) < 59*time.Minute || time.Until(c.Expires) > time.Hour {
		t.Errorf("cookie %+v, want kept=v1 with its attributes and an hour to live", c)
	}
}
