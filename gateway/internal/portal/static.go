package portal

import (
	"bytes"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"net/http"
	"time"
)

//go:embed static/portal.css static/portal.js
var static embed.FS

// staticFile is one embedded file and its media type.
type staticFile struct {
	body        []byte
	contentType string
	etag        string
}

// staticFiles reads the portal's style sheet and script, by name.
func staticFiles() map[string]staticFile {
	files := map[string]staticFile{}
	for name, contentType := range map[string]string{
		"portal.css": "text/css; charset=utf-8",
		"portal.js":  "application/javascript; charset=utf-8",
	} {
		body, err := static.ReadFile("static/" + name)
		if err != nil {
			panic("portal: missing embedded file " + name) // a build mistake, caught by the tests
		}
		sum := sha256.Sum256(body)
		files[name] = staticFile{body: body, contentType: contentType, etag: `"` + hex.EncodeToString(sum[:16]) + `"`}
	}
	return files
}

// serveStatic serves files under staticPrefix. They hold nothing of a
// session, so browsers may keep them a few minutes.
func (p *portal) serveStatic(files map[string]staticFile) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		f, ok := files[r.PathValue("file")]
		if !ok {
			p.notFound(w, r)
			return
		}
		h := w.Header()
		h.Set("Content-Type", f.contentType)
		h.Set("Cache-Control", "public, max-age=300")
		h.Set("ETag", f.etag)
		// ServeContent answers HEAD and If-None-Match (304).
		http.ServeContent(w, r, "", time.Time{}, bytes.NewReader(f.body))
	}
}
