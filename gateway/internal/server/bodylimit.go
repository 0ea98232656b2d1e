package server

import (
	"net/http"

	"github.com/liveproctor/workspaces/gateway/internal/httperr"
	"github.com/liveproctor/workspaces/gateway/internal/reqstate"
)

// limitBody answers 413 for a declared Content-Length over max before any
// decoding, and caps bodies of unknown length (chunked) at max. Reading past
// the cap marks the request, so the error handler answers 413 rather than
// the 400 grpc-gateway gives any decoding failure.
func limitBody(max int64, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.ContentLength > max {
			httperr.WriteTooLarge(w, r, max)
			return
		}
		if r.Body != nil && r.Body != http.NoBody {
			r.Body = reqstate.From(r.Context()).CapBody(http.MaxBytesReader(w, r.Body, max))
		}
		next.ServeHTTP(w, r)
	})
}
