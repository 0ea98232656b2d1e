package sdk_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"

	"github.com/liveproctor/workspaces/gateway/internal/sdk"
)

func get(t *testing.T, h http.Handler, method, path string, header map[string]string) (*http.Response, string) {
	t.Helper()
	req := httptest.NewRequest(method, path, nil)
	for k, v := range header {
		req.Header.Set(k, v)
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	resp := rec.Result()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp, string(body)
}

var etag = regexp.MustCompile(`^"[0-9a-f]{32}"$`)

func TestScript(t *testing.T) {
	h := sdk.Handler()
	resp, body := get(t, h, http.MethodGet, sdk.ScriptPath, nil)
	if resp.StatusCode != 200 {
		t.Fatalf("status %d", resp.StatusCode)
	}
	for k, want := range map[string]string{
		"Content-Type":           "application/javascript; charset=utf-8",
		"Cache-Control":          "public, max-age=300",
		"X-Content-Type-Options": "nosniff",
	} {
		if got := resp.Header.Get(k); got != want {
			t.Errorf("%s = %q, want %q", k, got, want)
		}
	}
	tag := resp.Header.Get("ETag")
	if !etag.MatchString(tag) {
		t.Errorf("ETag %q", tag)
	}
	// The script is a hand-written IIFE that documents its API, exposes
	// window.WorkspaceSDK and never writes markup from data.
	for _, want := range []string{"window.WorkspaceSDK", "global.WorkspaceSDK =", "LiveProctor", "init(", "'use strict'",
		"document.currentScript", "/api/sdk/session", "credentials: 'omit'", "data-liveproctor", "liveproctor:", "destroy"} {
		if !strings.Contains(body, want) {
			t.Errorf("sdk.js lacks %q", want)
		}
	}
	if !strings.HasPrefix(body, "/*") || !strings.Contains(body, "(function (global) {") || !strings.HasSuffix(strings.TrimSpace(body), "})(window);") {
		t.Errorf("sdk.js is not a commented IIFE")
	}
	for _, banned := range []string{"innerHTML", "outerHTML", "insertAdjacentHTML", "document.write", "eval(", "import "} {
		if strings.Contains(body, banned) {
			t.Errorf("sdk.js uses %q", banned)
		}
	}
	if len(body) > 32<<10 {
		t.Errorf("sdk.js is %d bytes; it should stay small", len(body))
	}

	resp, body = get(t, h, http.MethodGet, sdk.ScriptPath, map[string]string{"If-None-Match": tag})
	if resp.StatusCode != http.StatusNotModified || body != "" || resp.Header.Get("ETag") != tag {
		t.Errorf("conditional GET: %d %q", resp.StatusCode, body)
	}
	resp, body = get(t, h, http.MethodHead, sdk.ScriptPath, nil)
	if resp.StatusCode != 200 || body != "" || resp.Header.Get("Content-Type") != "application/javascript; charset=utf-8" {
		t.Errorf("HEAD: %d %q", resp.StatusCode, body)
	}
}

func TestDemo(t *testing.T) {
	h := sdk.Handler()
	resp, body := get(t, h, http.MethodGet, sdk.DemoPath, nil)
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "text/html; charset=utf-8" {
		t.Fatalf("demo: %d %v", resp.StatusCode, resp.Header)
	}
	if resp.Header.Get("X-Content-Type-Options") != "nosniff" || !etag.MatchString(resp.Header.Get("ETag")) ||
		!strings.Contains(resp.Header.Get("Content-Security-Policy"), "script-src 'self'") {
		t.Errorf("demo headers %v", resp.Header)
	}
	for _, want := range []string{`<script src="v1/sdk.js"></script>`, `<script src="demo.js"></script>`, `id="token"`, `id="exam"`, `id="log"`} {
		if !strings.Contains(body, want) {
			t.Errorf("demo lacks %q", want)
		}
	}
	if strings.Contains(body, "<script>") {
		t.Errorf("demo has an inline script, which its CSP forbids")
	}

	resp, body = get(t, h, http.MethodGet, sdk.DemoScriptPath, nil)
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "application/javascript; charset=utf-8" ||
		!strings.Contains(body, "WorkspaceSDK.LiveProctor") || strings.Contains(body, "innerHTML") {
		t.Errorf("demo.js: %d %v", resp.StatusCode, resp.Header)
	}
}

func TestOtherRequests(t *testing.T) {
	h := sdk.Handler()
	for _, path := range []string{"/sdk/", "/sdk/v1/", "/sdk/v1/sdk.js.map", "/sdk/static/sdk.js", "/sdk/demo.html"} {
		if resp, _ := get(t, h, http.MethodGet, path, nil); resp.StatusCode != 404 {
			t.Errorf("%s: %d", path, resp.StatusCode)
		}
	}
	resp, _ := get(t, h, http.MethodPost, sdk.ScriptPath, nil)
	if resp.StatusCode != 405 || resp.Header.Get("Allow") != "GET, HEAD" {
		t.Errorf("POST: %d %v", resp.StatusCode, resp.Header)
	}
	if got := sdk.Paths(); len(got) != 4 {
		t.Errorf("Paths() = %v", got)
	}
}
