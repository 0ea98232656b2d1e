package server

import (
	"mime"
	"net/http"
	"strings"

	"github.com/grpc-ecosystem/grpc-gateway/v2/runtime"

	"github.com/liveproctor/workspaces/pkg/fault"
)

// requireJSON answers 415 for a POST, PUT or PATCH whose body is declared
// as anything but JSON, before the body is read. A body without a
// Content-Type is taken as JSON, which is all the API speaks.
func requireJSON(next runtime.HandlerFunc) runtime.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request, params map[string]string) {
		switch {
		case r.URL.Path == ltiLaunchPath:
			// An LTI launch is a form post; its handler checks that.
		case r.Method == http.MethodPost || r.Method == http.MethodPut || r.Method == http.MethodPatch:
			if ct := r.Header.Get("Content-Type"); r.ContentLength != 0 && ct != "" && !isJSON(ct) {
				writeKindError(w, r, fault.UnsupportedMediaType, "the request body must be JSON (Content-Type: application/json)")
				return
			}
		}
		next(w, r, params)
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
