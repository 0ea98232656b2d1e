package reqstate

import (
	"errors"
	"io"
	"net/http"
	"os"
	"sync/atomic"
)

// Body is a request body capped by http.MaxBytesReader that records
// hitting the cap, or the request deadline, in the request's state.
type Body struct {
	io.ReadCloser
	state *State
	// ended is set once a read returned an error or the end: nothing
	// more will be read, so the deadline need not cut a read short.
	ended atomic.Bool
}

// CapBody returns the request's body, capped, that notes in s why a read
// failed: capped is http.MaxBytesReader over the body as received.
func (s *State) CapBody(capped io.ReadCloser) *Body {
	s.body.ReadCloser, s.body.state = capped, s
	return &s.body
}

// Read reads from the capped body, noting an overflow or a read cut short
// by the request deadline.
func (b *Body) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if err != nil {
		b.ended.Store(true)
		var tooLarge *http.MaxBytesError
		switch {
		case errors.As(err, &tooLarge):
			b.state.BodyTooLarge = true
		case errors.Is(err, os.ErrDeadlineExceeded):
			b.state.BodyTimedOut = true
		}
	}
	return n, err
}

// Ended reports whether a read has returned the end or an error.
func (b *Body) Ended() bool { return b.ended.Load() }

// FromBody returns the state of the request whose body is body, when
// CapBody made it, or nil.
func FromBody(body io.Reader) *State {
	if b, ok := body.(*Body); ok {
		return b.state
	}
	return nil
}
