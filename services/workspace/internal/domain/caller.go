package domain

import "time"

// Caller is who a request comes from: the workspace owning the key pair it
// authenticated with.
type Caller struct {
	WorkspaceID string
	AppKey      string
	Tags        []Tag
	// RESTAccess is true when the key pair carries RESTAccessTag.
	RESTAccess bool
	// RateLimit is the workspace's own limit for its key pairs; nil: the
	// service's default.
	RateLimit *RateLimit
	// RequestID is the request's id (X-Request-Id), which the events of
	// the changes it makes carry.
	RequestID string
	// KeyExpiresAt is when the key pair stops authenticating (zero: it
	// does not expire), so a service that caches the caller's access can
	// stop in time.
	KeyExpiresAt time.Time
}

// Actor is the caller as the author of a change.
func (c Caller) Actor() Actor { return Actor{WorkspaceID: c.WorkspaceID, AppKey: c.AppKey} }
