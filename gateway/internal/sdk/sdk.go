// Package sdk serves the browser SDK: the LiveProctor component script
// (/sdk/v1/sdk.js) and a demo page that launches it (/sdk/demo). The files
// are embedded in the binary; the script is hand-written and needs no build
// step.
package sdk

import (
	"embed"
	"net/http"

	"github.com/liveproctor/workspaces/gateway/internal/asset"
)

// The paths this package serves.
const (
	ScriptPath     = "/sdk/v1/sdk.js"
	DemoPath       = "/sdk/demo"
	DemoScriptPath = "/sdk/demo.js"
	// LaunchScriptPath opens the component on an LTI launch's page.
	LaunchScriptPath = "/sdk/v1/launch.js"
)

// SessionPath is the API route the script calls from pages on other
// origins: it checks (GET) and revokes (DELETE) its token there. The auth
// service answers it; the gateway gives it CORS and a Bearer challenge.
const SessionPath = "/api/sdk/session"

//go:embed static/sdk.js static/demo.html static/demo.js static/launch.js
var static embed.FS

// demoCSP lets the demo page run its own scripts only; it may call any
// gateway, since its form takes a gateway URL.
const demoCSP = "default-src 'none'; script-src 'self'; style-src 'unsafe-inline'; connect-src *; " +
	"img-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"

// Paths lists the paths Handler serves, for a router that registers routes
// one by one. Each answers GET and HEAD.
func Paths() []string { return []string{ScriptPath, DemoPath, DemoScriptPath, LaunchScriptPath} }

// Handler serves the SDK files at their paths (see Paths) with GET and HEAD,
// with an ETag, conditional requests and caching headers. Other paths get
// 404 and other methods 405; a gateway normally routes only Paths here.
func Handler() http.Handler {
	assets := map[string]asset.File{
		ScriptPath: load("static/sdk.js", http.Header{
			"Content-Type":  {"application/javascript; charset=utf-8"},
			"Cache-Control": {"public, max-age=300"},
			// The script is public: pages on any origin may load it, with
			// Subresource Integrity (crossorigin="anonymous") too.
			"Access-Control-Allow-Origin":  {"*"},
			"Cross-Origin-Resource-Policy": {"cross-origin"},
		}),
		LaunchScriptPath: load("static/launch.js", http.Header{
			"Content-Type":  {"application/javascript; charset=utf-8"},
			"Cache-Control": {"public, max-age=300"},
		}),
		DemoScriptPath: load("static/demo.js", http.Header{
			"Content-Type":  {"application/javascript; charset=utf-8"},
			"Cache-Control": {"public, max-age=300"},
		}),
		DemoPath: load("static/demo.html", http.Header{
			"Content-Type":            {"text/html; charset=utf-8"},
			"Cache-Control":           {"no-cache"},
			"Content-Security-Policy": {demoCSP},
			"X-Frame-Options":         {"DENY"},
			"Referrer-Policy":         {"no-referrer"},
		}),
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		a, ok := assets[r.URL.Path]
		if !ok {
			http.NotFound(w, r)
			return
		}
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			w.Header().Set("Allow", "GET, HEAD")
			http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
			return
		}
		a.Serve(w, r)
	})
}

// load reads one of the package's embedded files.
func load(name string, header http.Header) asset.File { return asset.Load(static, name, header) }
