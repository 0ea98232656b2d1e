package server

import (
	"errors"
	"io"
	"net/http"
	"os"
	"sync/atomic"
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
			state := stateFrom(r.Context())
			state.body.ReadCloser, state.body.state = http.MaxBytesReader(w, r.Body, max), state
			r.Body = &state.body
		}
		next.ServeHTTP(w, r)
	})
}

// limitedBody is a request body capped by http.MaxBytesReader that records
// hitting the cap, or the request deadline, in the request's state.
type limitedBody struct {
	io.ReadCloser
	state *requestState
	// ended is set once a read returned an error or the end: nothing
	// more will be read, so the deadline need not cut a read short.
	ended atomic.Bool
}

// Read reads from the capped body, noting an overflow or a read cut short
// by the request deadline (see withTimeout).
func (b *limitedBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if err != nil {
		b.ended.Store(true)
		var tooLarge *http.MaxBytesError
		switch {
		case errors.As(err, &tooLarge):
			b.state.bodyTooLarge = true
		case errors.Is(err, os.ErrDeadlineExceeded):
			b.state.bodyTimedOut = true
		}
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
