package server

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"net/http"
)

// RequestIDHeader carries the request id in both directions.
const RequestIDHeader = "X-Request-Id"

// requestIDMetadata is the gRPC metadata key the request id travels under.
const requestIDMetadata = "x-request-id"

// maxRequestIDLen bounds a caller's request id; longer ones are replaced.
const maxRequestIDLen = 128

// ctxKey keys the values this package keeps in a request's context.
type ctxKey int

const stateKey ctxKey = iota

// requestState is what the middlewares learn about one request and the
// decoder and error handler need later: its id, its route, and what went
// wrong reading its body or query. It is only touched by the goroutine
// serving the request.
type requestState struct {
	id string
	// bodyTooLarge is set once reading the body hit the size limit.
	bodyTooLarge bool
	// bodyTimedOut is set once reading the body hit the request deadline.
	bodyTimedOut bool
	// decodeErr is the reason the body or query could not be decoded, if
	// it could not.
	decodeErr *decodeError
	// route is the pattern the mux matched, for metrics; empty if none.
	route string
	// pathParams are the matched route's path variables by proto field
	// path (id), which a body may repeat but not contradict.
	pathParams map[string]string

	// writer and body are the request's status-tracking writer and capped
	// body (trackStatus, limitBody), kept here so that a request allocates
	// one state rather than three objects.
	writer statusWriter
	body   limitedBody
}

// stateFrom returns the request's state, or an empty one outside the
// middleware chain.
func stateFrom(ctx context.Context) *requestState {
	if s, ok := ctx.Value(stateKey).(*requestState); ok {
		return s
	}
	return &requestState{}
}

// requestIDFrom returns the request's id, or "" outside the middleware chain.
func requestIDFrom(ctx context.Context) string { return stateFrom(ctx).id }

// withRequestID keeps a sane X-Request-Id from the caller or makes a new one,
// stores it with the request's state and echoes it on the response before
// anything else can write, so every answer (errors and panics included)
// carries it.
func withRequestID(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id := r.Header.Get(RequestIDHeader)
		if !validRequestID(id) {
			id = newRequestID()
		}
		w.Header().Set(RequestIDHeader, id)
		ctx := context.WithValue(r.Context(), stateKey, &requestState{id: id})
		next.ServeHTTP(w, r.WithContext(ctx))
	})
}

// validRequestID reports whether id is 1 to 128 characters of
// A-Z a-z 0-9 . _ : -, safe to log and to forward as metadata.
func validRequestID(id string) bool {
	if len(id) == 0 || len(id) > maxRequestIDLen {
		return false
	}
	for i := 0; i < len(id); i++ {
		switch c := id[i]; {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9':
		case c == '.', c == '_', c == ':', c == '-':
		default:
			return false
		}
	}
	return true
}

// newRequestID returns 16 random bytes in hex.
func newRequestID() string {
	var b [16]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails on supported platforms.
	return hex.EncodeToString(b[:])
}
