package reqstate

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"net/http"
)

// IDHeader carries the request id in both directions.
const IDHeader = "X-Request-Id"

// IDMetadata is the gRPC metadata key the request id travels under.
const IDMetadata = "x-request-id"

// maxIDLen bounds a caller's request id; longer ones are replaced.
const maxIDLen = 128

// WithID keeps a sane X-Request-Id from the caller or makes a new one,
// stores it with the request's new state and echoes it on the response
// before anything else can write, so every answer (errors and panics
// included) carries it.
func WithID(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id := r.Header.Get(IDHeader)
		if !validID(id) {
			id = newID()
		}
		w.Header().Set(IDHeader, id)
		ctx := context.WithValue(r.Context(), stateKey, &State{ID: id})
		next.ServeHTTP(w, r.WithContext(ctx))
	})
}

// validID reports whether id is 1 to 128 characters of
// A-Z a-z 0-9 . _ : -, safe to log and to forward as metadata.
func validID(id string) bool {
	if len(id) == 0 || len(id) > maxIDLen {
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

// newID returns 16 random bytes in hex.
func newID() string {
	var b [16]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails on supported platforms.
	return hex.EncodeToString(b[:])
}
