package restcheck

import (
	"mime"
	"net/http"
	"slices"
	"strings"

	"github.com/grpc-ecosystem/grpc-gateway/v2/runtime"

	"github.com/liveproctor/workspaces/gateway/internal/httperr"
	"github.com/liveproctor/workspaces/pkg/fault"
)

// RequireJSON returns a middleware that answers 415 for a POST, PUT or
// PATCH whose body is declared as anything but JSON, before the body is
// read. A body without a Content-Type is taken as JSON, which is all the
// API speaks. formPaths are the routes that take forms (an LTI launch),
// whose handlers check the media type themselves.
func RequireJSON(formPaths ...string) runtime.Middleware {
	return func(next runtime.HandlerFunc) runtime.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request, params map[string]string) {
			switch {
			case slices.Contains(formPaths, r.URL.Path):
			case r.Method == http.MethodPost || r.Method == http.MethodPut || r.Method == http.MethodPatch:
				if ct := r.Header.Get("Content-Type"); r.ContentLength != 0 && ct != "" && !isJSON(ct) {
					httperr.Write(w, r, fault.UnsupportedMediaType, "the request body must be JSON (Content-Type: application/json)")
					return
				}
			}
			next(w, r, params)
		}
	}
}

// isJSON reports whether the media type contentType is application/json or
// a JSON-based application/*+json, with any parameters.
func isJSON(contentType string) bool {
	if contentType == "application/json" {
		return true
	}
	mediaType, _, err := mime.ParseMediaType(contentType)
	if err != nil {
		return false
	}
	return mediaType == "application/json" ||
		strings.HasPrefix(mediaType, "application/") && strings.HasSuffix(mediaType, "+json")
}
