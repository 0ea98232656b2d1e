// Package reqstate keeps what the gateway learns about one request while it
// serves it: its id, its matched route and path parameters, its status
// and size once answered, and why its body or query string was refused.
// The middlewares fill it in and the decoders and error answers read it,
// so every other package of the gateway depends on this one and it on none.
package reqstate

import "context"

// ctxKey keys the values this package keeps in a request's context.
type ctxKey int

const stateKey ctxKey = iota

// State is what the middlewares learn about one request and the decoder
// and error answers need later. It is only touched by the goroutine serving
// the request.
type State struct {
	// ID is the request's id (see WithID).
	ID string
	// BodyTooLarge is set once reading the body hit the size limit.
	BodyTooLarge bool
	// BodyTimedOut is set once reading the body hit the request deadline.
	BodyTimedOut bool
	// DecodeErr is the reason the body or query could not be decoded, if
	// it could not: the error answer's message, and the field it names.
	DecodeErr error
	// Route is the pattern the mux matched, for metrics; empty if none.
	Route string
	// PathParams are the matched route's path variables by proto field
	// path (id), which a body may repeat but not contradict.
	PathParams map[string]string

	// writer and body are the request's status-tracking writer and capped
	// body (TrackStatus, CapBody), kept here so that a request allocates
	// one state rather than three objects.
	writer Writer
	body   Body
}

// From returns the request's state, or an empty one outside the
// middleware chain.
func From(ctx context.Context) *State {
	if s, ok := ctx.Value(stateKey).(*State); ok {
		return s
	}
	return &State{}
}

// ID returns the request's id, or "" outside the middleware chain.
func ID(ctx context.Context) string { return From(ctx).ID }
