package server

import (
	"errors"
	"io"
	"net/http"
)

// limitBody answers 413 for a declared Content-Length over max before any
// decoding, and caps bodies of unknown length (chunked) at max. Reading past
// the cap marks the request, so the error handler answers 413 rather than
// the 400 grpc-gateway gives any decoding failure.
func limitBody(max int64, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.ContentLength > max {
			writeTooLarge(w, r, max)
			return
		}
		if r.Body != nil && r.Body != http.NoBody {
			r.Body = &limitedBody{
				ReadCloser: http.MaxBytesReader(w, r.Body, max),
				state:      stateFrom(r.Context()),
			}
		}
		next.ServeHTTP(w, r)
	})
}

// limitedBody is a request body capped by http.MaxBytesReader that records
// hitting the cap in the request's state.
type limitedBody struct {
	io.ReadCloser
	state *requestState
}

// Read reads from the capped body, noting an overflow.
func (b *limitedBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	var tooLarge *http.MaxBytesError
	if errors.As(err, &tooLarge) {
		b.state.bodyTooLarge = true
	}
	return n, err
}

// bodyState returns the state of the request whose body is body, when
// limitBody installed it, or nil.
func bodyState(body io.Reader) *requestState {
	if b, ok := body.(*limitedBody); ok {
		return b.state
	}
	return nil
}
