package domain

import (
	"crypto/subtle"
	"time"

	"github.com/liveproctor/workspaces/pkg/fault"
)

// The lifetimes of a link and of the session it starts. A session does not
// slide: it ends SessionTTL after the link was opened, however busy.
const (
	LinkTTL    = 5 * time.Minute
	SessionTTL = time.Hour
)

// The links one workspace may make: LinksPerWindow in each LinkWindow. A
// person asks for a link at a time; a client caught in a loop fills
// neither the store (a link is kept for its session's hour) nor an
// administrator's inbox. A workspace thus has at most
// LinksPerWindow × (LinkTTL + SessionTTL) / LinkWindow links kept at once.
const (
	LinkWindow     = 5 * time.Minute
	LinksPerWindow = 50
)

// Window is the start of the LinkWindow now falls in, the same on every
// replica.
func Window(now time.Time) time.Time { return now.UTC().Truncate(LinkWindow) }

// ErrTooManyLinks refuses a link past LinksPerWindow, until when the
// window ends.
func ErrTooManyLinks(now time.Time) error {
	return &fault.Error{Kind: fault.Throttled,
		Message:    "this workspace has made 50 portal links in the last 5 minutes: make the next one when a link is needed, once the window ends",
		RetryAfter: Window(now).Add(LinkWindow).Sub(now)}
}

// Errors of the link rules.
var (
	// ErrLinkUnusable: the link cannot be opened (never made, opened
	// already, revoked, expired, or its workspace deleted since).
	ErrLinkUnusable = fault.New(fault.Unauthenticated,
		"This portal link is unknown, used, revoked or expired: a link works once, for 5 minutes. Ask for a new one.")
	// ErrSessionOver: the session a token names is unknown, revoked or
	// over, or its workspace was deleted since it started.
	ErrSessionOver = fault.New(fault.Unauthenticated,
		"the portal session is unknown, revoked or over: open a new portal link")
)

// Link is a link to the administrator's portal: made for one workspace, it
// is opened once, before ExpiresAt, which starts a session for that
// workspace; revoking it ends both.
type Link struct {
	// ID names the link in the audit trail and in a revocation; it is not
	// a secret (the link's secret and the session's token are, and the
	// link holds neither).
	ID          string
	WorkspaceID string
	// ReturnURL is where the portal's way back leads; empty: none.
	ReturnURL string
	CreatedAt time.Time
	ExpiresAt time.Time
	// WorkspaceCutoff is the workspace's token cut-off when the link was
	// made. Every delete and undelete of the workspace moves it, which
	// ends the link and its session (Current).
	WorkspaceCutoff time.Time
	// OpenedAt is when the link was opened (zero until it is), and
	// SessionDigest the digest of the token of the session it started.
	OpenedAt      time.Time
	SessionDigest string
	// RevokedAt is when the link was revoked; zero while it is not.
	RevokedAt time.Time
}

// NewLink is a new link id to the portal of a workspace, made at now: the
// workspace's token cut-off is what it has at now. returnURL, when not
// empty, must pass CheckReturnURL.
func NewLink(id, workspaceID, returnURL string, workspaceCutoff, now time.Time) (Link, error) {
	if err := CheckReturnURL(returnURL); err != nil {
		return Link{}, err
	}
	return Link{
		ID: id, WorkspaceID: workspaceID, ReturnURL: returnURL,
		CreatedAt: now, ExpiresAt: now.Add(LinkTTL), WorkspaceCutoff: workspaceCutoff,
	}, nil
}

// Opened reports whether the link was opened.
func (l Link) Opened() bool { return !l.OpenedAt.IsZero() }

// Revoked reports whether the link was revoked.
func (l Link) Revoked() bool { return !l.RevokedAt.IsZero() }

// SessionEnd is when the session the link started ends on its own.
func (l Link) SessionEnd() time.Time { return l.OpenedAt.Add(SessionTTL) }

// ForgetAt is when nothing of the link matters any more, so that a store
// may forget it: its session's end, or, for a link never opened, the end
// of a session opened at its last moment. Until then a revocation answers
// the same again.
func (l Link) ForgetAt() time.Time {
	if l.Opened() {
		return l.SessionEnd()
	}
	return l.ExpiresAt.Add(SessionTTL)
}

// Current reports whether the link still stands for its workspace as the
// workspace is now: active, and neither deleted nor undeleted since the
// link was made (its token cut-off unmoved). An undelete revives no link
// and no session.
func (l Link) Current(workspaceActive bool, workspaceCutoff time.Time) bool {
	return workspaceActive && workspaceCutoff.Equal(l.WorkspaceCutoff)
}

// Open starts the link's session at now, whose token has sessionDigest
// (Digest): ErrLinkUnusable when it was opened or revoked already, or has
// expired.
func (l *Link) Open(sessionDigest string, now time.Time) error {
	if l.Opened() || l.Revoked() || !now.Before(l.ExpiresAt) {
		return ErrLinkUnusable
	}
	l.OpenedAt, l.SessionDigest = now, sessionDigest
	return nil
}

// Revoke ends the link at now, and its session if it was opened; it
// reports false when the link was revoked already, which changes nothing.
func (l *Link) Revoke(now time.Time) bool {
	if l.Revoked() {
		return false
	}
	l.RevokedAt = now
	return true
}

// Admits reports whether the session whose token has sessionDigest is
// the link's, and goes on at now: opened, not revoked, before its end.
func (l Link) Admits(sessionDigest string, now time.Time) bool {
	return l.Opened() && !l.Revoked() && now.Before(l.SessionEnd()) &&
		subtle.ConstantTimeCompare([]byte(sessionDigest), []byte(l.SessionDigest)) == 1
}
