package server_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/liveproctor/workspaces/gateway/internal/config"
	"github.com/liveproctor/workspaces/pkg/envconfig"
)

var corsHeaders = []string{
	"Access-Control-Allow-Origin", "Access-Control-Allow-Headers", "Access-Control-Allow-Methods",
	"Access-Control-Expose-Headers", "Access-Control-Max-Age", "Access-Control-Allow-Credentials",
}

// checkCORS asserts the CORS headers granted to origin.
func checkCORS(t *testing.T, resp *http.Response, origin string) {
	t.Helper()
	want := map[string]string{
		"Access-Control-Allow-Origin":      origin,
		"Access-Control-Allow-Headers":     "Authorization, Content-Type, X-Request-Id",
		"Access-Control-Allow-Methods":     "GET, DELETE, OPTIONS",
		"Access-Control-Expose-Headers":    "X-Request-Id",
		"Access-Control-Max-Age":           "600",
		"Access-Control-Allow-Credentials": "",
	}
	for k, v := range want {
		if got := resp.Header.Get(k); got != v {
			t.Errorf("%s = %q, want %q", k, got, v)
		}
	}
	if !strings.Contains(strings.Join(resp.Header.Values("Vary"), ","), "Origin") {
		t.Errorf("Vary = %q", resp.Header.Values("Vary"))
	}
}

// checkNoCORS asserts an answer grants nothing.
func checkNoCORS(t *testing.T, resp *http.Response) {
	t.Helper()
	for _, k := range corsHeaders {
		if v := resp.Header.Get(k); v != "" {
			t.Errorf("%s = %q on an answer that grants nothing", k, v)
		}
	}
}

func preflight(origin, method string) map[string]string {
	return map[string]string{
		"Origin": origin, "Access-Control-Request-Method": method,
		"Access-Control-Request-Headers": "authorization",
	}
}

func TestCORSAllowedOrigin(t *testing.T) {
	e := newEnv(t, options{corsOrigins: []string{"https://app.example.com", "http://localhost:3000"}})
	const origin = "https://app.example.com"

	resp, body := e.do(t, http.MethodGet, "/api/sdk/session", nil, map[string]string{"Origin": origin, "Authorization": "Bearer good"})
	if resp.StatusCode != 200 || !strings.Contains(string(body), `"email":"a@b.c"`) {
		t.Fatalf("GET: %d %s", resp.StatusCode, body)
	}
	checkCORS(t, resp, origin)

	// Errors carry the headers too, so the page can read the error body.
	resp, body = e.do(t, http.MethodGet, "/api/sdk/session", nil, map[string]string{"Origin": origin, "Authorization": "Bearer forged"})
	checkError(t, resp, body, 401, "UNAUTHENTICATED")
	checkCORS(t, resp, origin)

	resp, _ = e.do(t, http.MethodDelete, "/api/sdk/session", nil, map[string]string{"Origin": "http://localhost:3000", "Authorization": "Bearer good"})
	if resp.StatusCode != 200 {
		t.Errorf("DELETE: %d", resp.StatusCode)
	}
	checkCORS(t, resp, "http://localhost:3000")

	// Origins compare case-insensitively; the answer echoes the request.
	resp, _ = e.do(t, http.MethodGet, "/api/sdk/session", nil, map[string]string{"Origin": "HTTPS://APP.example.com", "Authorization": "Bearer good"})
	checkCORS(t, resp, "HTTPS://APP.example.com")

	// Other routes never get CORS headers.
	e.workspaces.workspace = sampleWorkspace()
	resp, _ = e.do(t, http.MethodGet, "/api/workspace/w1", nil, map[string]string{"Origin": origin})
	checkNoCORS(t, resp)
	resp, _ = e.do(t, http.MethodOptions, "/api/login/sdk", nil, preflight(origin, "POST"))
	checkNoCORS(t, resp)
	if resp.StatusCode == http.StatusNoContent {
		t.Errorf("preflight of /api/login/sdk answered 204")
	}
}

func TestCORSPreflight(t *testing.T) {
	e := newEnv(t, options{corsOrigins: []string{"https://app.example.com"}})
	for _, method := range []string{"GET", "DELETE"} {
		resp, body := e.do(t, http.MethodOptions, "/api/sdk/session", nil, preflight("https://app.example.com", method))
		if resp.StatusCode != http.StatusNoContent || len(body) != 0 {
			t.Errorf("preflight %s: %d %q", method, resp.StatusCode, body)
		}
		checkCORS(t, resp, "https://app.example.com")
		if resp.Header.Get("X-Request-Id") == "" {
			t.Errorf("preflight without X-Request-Id")
		}
	}
	if n := e.auth.sessionCalls.Load(); n != 0 {
		t.Errorf("preflight called the backend %d times", n)
	}
}

func TestCORSDisallowedOrigin(t *testing.T) {
	e := newEnv(t, options{corsOrigins: []string{"https://app.example.com"}})
	for _, origin := range []string{"https://evil.example.com", "https://app.example.com.evil.example", "http://app.example.com", "null"} {
		resp, body := e.do(t, http.MethodOptions, "/api/sdk/session", nil, preflight(origin, "GET"))
		checkError(t, resp, body, 403, "PERMISSION_DENIED")
		checkNoCORS(t, resp)

		// The request itself is served (a non-browser client has no
		// Origin rules), but without CORS headers a page cannot read it.
		resp, _ = e.do(t, http.MethodGet, "/api/sdk/session", nil, map[string]string{"Origin": origin, "Authorization": "Bearer good"})
		if resp.StatusCode != 200 {
			t.Errorf("GET from %s: %d", origin, resp.StatusCode)
		}
		checkNoCORS(t, resp)
	}
	if n := e.auth.sessionCalls.Load(); n != 4 {
		t.Errorf("backend called %d times, want 4 (no preflight)", n)
	}

	// No Origin: not a CORS request, served as before.
	resp, _ := e.do(t, http.MethodGet, "/api/sdk/session", nil, map[string]string{"Authorization": "Bearer good"})
	if resp.StatusCode != 200 {
		t.Errorf("GET without Origin: %d", resp.StatusCode)
	}
	checkNoCORS(t, resp)

	// An empty list allows nobody.
	none := newEnv(t, options{})
	resp, body := none.do(t, http.MethodOptions, "/api/sdk/session", nil, preflight("https://app.example.com", "GET"))
	checkError(t, resp, body, 403, "PERMISSION_DENIED")
}

func TestCORSDefaultAllowsAnyOrigin(t *testing.T) {
	cfg, err := config.Read(envconfig.FromMap(nil))
	if err != nil {
		t.Fatal(err)
	}
	e := newEnv(t, options{corsOrigins: cfg.CORSAllowedOrigins})
	for _, origin := range []string{"https://anything.example", "http://127.0.0.1:5173", "null"} {
		resp, _ := e.do(t, http.MethodOptions, "/api/sdk/session", nil, preflight(origin, "GET"))
		if resp.StatusCode != http.StatusNoContent {
			t.Errorf("preflight from %s: %d", origin, resp.StatusCode)
		}
		checkCORS(t, resp, origin)
		resp, _ = e.do(t, http.MethodGet, "/api/sdk/session", nil, map[string]string{"Origin": origin, "Authorization": "Bearer good"})
		if resp.StatusCode != 200 {
			t.Errorf("GET from %s: %d", origin, resp.StatusCode)
		}
		checkCORS(t, resp, origin)
	}
}

func TestSDKFilesServed(t *testing.T) {
	e := newEnv(t, options{})
	resp, body := e.do(t, http.MethodGet, "/sdk/v1/sdk.js", nil, nil)
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "application/javascript; charset=utf-8" ||
		!strings.Contains(string(body), "WorkspaceSDK") || resp.Header.Get("ETag") == "" || resp.Header.Get("X-Request-Id") == "" {
		t.Errorf("sdk.js: %d %v", resp.StatusCode, resp.Header)
	}
	resp, _ = e.do(t, http.MethodGet, "/sdk/v1/sdk.js", nil, map[string]string{"If-None-Match": resp.Header.Get("ETag")})
	if resp.StatusCode != http.StatusNotModified {
		t.Errorf("conditional GET: %d", resp.StatusCode)
	}
	resp, body = e.do(t, http.MethodHead, "/sdk/demo", nil, nil)
	if resp.StatusCode != 200 || len(body) != 0 || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/html") {
		t.Errorf("HEAD demo: %d %q", resp.StatusCode, body)
	}
	resp, body = e.do(t, http.MethodGet, "/sdk/demo.js", nil, nil)
	if resp.StatusCode != 200 || len(body) == 0 {
		t.Errorf("demo.js: %d", resp.StatusCode)
	}
	// Anything else under /sdk/ gets the gateway's routing errors.
	resp, body = e.do(t, http.MethodGet, "/sdk/v1/other.js", nil, nil)
	checkError(t, resp, body, 404, "NOT_FOUND")
	resp, body = e.do(t, http.MethodPost, "/sdk/v1/sdk.js", strings.NewReader("{}"), nil)
	checkError(t, resp, body, 405, "UNIMPLEMENTED")
}
