// Package asset serves the files embedded in the gateway's binary (the
// SDK's scripts, the portal's style sheet and script): each with its own
// headers, a strong ETag of its content, and conditional requests and HEAD
// answered by net/http.
package asset

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"io/fs"
	"net/http"
	"time"
)

// File is an embedded file with the headers it is served with.
type File struct {
	name   string
	body   []byte
	header http.Header
}

// Load reads name from fsys and adds to header what every file has: its
// ETag and nosniff. A missing file panics: a build mistake, which the
// tests of every package serving one catch.
func Load(fsys fs.ReadFileFS, name string, header http.Header) File {
	body, err := fsys.ReadFile(name)
	if err != nil {
		panic("asset: missing embedded file " + name)
	}
	sum := sha256.Sum256(body)
	header.Set("ETag", `"`+hex.EncodeToString(sum[:16])+`"`)
	header.Set("X-Content-Type-Options", "nosniff")
	return File{name: name, body: body, header: header}
}

// Serve answers r with f: its headers, then its body, or 304 when the
// request's If-None-Match holds its ETag (http.ServeContent, which also
// answers HEAD and ranges).
func (f File) Serve(w http.ResponseWriter, r *http.Request) {
	h := w.Header()
	for k, vs := range f.header {
		h[k] = vs
	}
	http.ServeContent(w, r, f.name, time.Time{}, bytes.NewReader(f.body))
}
