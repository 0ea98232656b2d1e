package portal

import (
	"embed"
	"net/http"

	"github.com/liveproctor/workspaces/gateway/internal/asset"
)

//go:embed static/portal.css static/portal.js
var static embed.FS

// staticFiles reads the portal's style sheet and script, by name. They
// hold nothing of a session, so browsers may keep them a few minutes.
func staticFiles() map[string]asset.File {
	files := map[string]asset.File{}
	for name, contentType := range map[string]string{
		"portal.css": "text/css; charset=utf-8",
		"portal.js":  "application/javascript; charset=utf-8",
	} {
		files[name] = asset.Load(static, "static/"+name, http.Header{
			"Content-Type":  {contentType},
			"Cache-Control": {"public, max-age=300"},
		})
	}
	return files
}

// serveStatic serves files under staticPrefix.
func (p *portal) serveStatic(files map[string]asset.File) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		f, ok := files[r.PathValue("file")]
		if !ok {
			p.notFound(w, r)
			return
		}
		f.Serve(w, r)
	}
}
