package domain

import "time"

// Caller is who a request comes from: the workspace owning the key pair it
// authenticated with, or the workspace of the administrator's portal
// session it presented (PortalLinkID).
type Caller struct {
	WorkspaceID string
	AppKey      string // empty for a portal session
	// PortalLinkID is the portal link whose session the request presented;
	// empty for a key pair. Such a caller acts on its own workspace only,
	// never on those it manages.
	PortalLinkID string
	Tags         []Tag
	// RESTAccess is true when the key pair carries RESTAccessTag, and for
	// a portal session.
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

// InPortal reports whether the caller is an administrator in the portal
// (a portal session), not a key pair.
func (c Caller) InPortal() bool { return c.PortalLinkID != "" }

// Actor is the caller as the author of a change.
func (c Caller) Actor() Actor {
	return Actor{WorkspaceID: c.WorkspaceID, AppKey: c.AppKey, PortalLinkID: c.PortalLinkID}
}
