// Package app holds the administrator's portal's use cases: making,
// revoking and opening portal links (Portal), the session an opening
// starts, and the check of a session's token that the workspace service's
// policy admits calls with (Sessions). Links and sessions live in the
// Store (Redis, or this process's memory for one replica); the workspace
// side is reached only through Workspaces, declared here and implemented
// by the workspace application (internal/app/portal_port.go).
//
// It is named app, like every context's application package; a file that
// imports both names this one portalapp.
package app

import (
	"context"
	"log/slog"
	"time"

	"github.com/liveproctor/workspaces/pkg/clip"
	"github.com/liveproctor/workspaces/pkg/fault"
	"github.com/liveproctor/workspaces/services/workspace/internal/domain"
	portaldomain "github.com/liveproctor/workspaces/services/workspace/internal/portal/domain"
)

// Workspaces is what the portal's use cases need of the workspace side:
// its tenancy rule, its workspaces (whether one is active, and its token
// cut-off, which a delete or an undelete moves), and the audit trail.
type Workspaces interface {
	// Managed returns the active workspace id if caller may make and
	// revoke its portal links: its own or one it manages, with a key pair
	// (the rule of registration links); its own only, in the portal. Any
	// other is the usual not-found answer.
	Managed(ctx context.Context, caller domain.Caller, id string) (*domain.Workspace, error)
	// Get returns workspace id, deleted or not; an unknown id is
	// domain.ErrNotFound.
	Get(ctx context.Context, id string) (*domain.Workspace, error)
	// AppendEvent records e, which rides on no workspace's write, in the
	// audit trail; an event with the Key of one recorded already is not
	// recorded again.
	AppendEvent(ctx context.Context, e domain.Event) error
}

// Store keeps the portal's links, shared by every replica (Redis) or in
// this process (one replica), with the ways to them: a link's secret
// finds it until it expires, a session's token until the session ends.
// It holds digests of secrets and tokens only, never one of them.
type Store interface {
	// Add stores the new link l, found by its id until l.ForgetAt and by
	// secret until l.ExpiresAt.
	Add(ctx context.Context, l portaldomain.Link, secret string) error
	// Spend takes the id of the link secret finds, and forgets the way, in
	// one step: of callers presenting one secret at once, one gets it. ok
	// is false when secret finds none (never made, spent or expired).
	Spend(ctx context.Context, secret string) (id string, ok bool, err error)
	// Link returns the link id; ok is false when the store does not know
	// it (never made, or past its ForgetAt).
	Link(ctx context.Context, id string) (l portaldomain.Link, ok bool, err error)
	// Update changes the link id by apply, keeping it until its ForgetAt,
	// so that no change made meanwhile by another caller is lost: apply
	// runs again on the link as it is then. apply reports whether it
	// changed anything; when it returns an error, nothing is stored and
	// the error is returned. ok is false when the store does not know the
	// link.
	Update(ctx context.Context, id string, apply func(*portaldomain.Link) (bool, error)) (l portaldomain.Link, ok bool, err error)
	// StartSession makes the link id found by the session's token until
	// the session's end.
	StartSession(ctx context.Context, token, id string, end time.Time) error
	// SessionLink returns the id of the link token finds; ok is false
	// when it finds none (never given, or past the session's end).
	SessionLink(ctx context.Context, token string) (id string, ok bool, err error)
	// CountMade counts one more link made by the workspace in the window
	// starting at window (portaldomain.Window), and returns how many that
	// window has counted, this one included.
	CountMade(ctx context.Context, workspaceID string, window time.Time) (int64, error)
}

// Settings are what the portal's use cases are configured with.
type Settings struct {
	// BaseURL is the service's public base URL (PUBLIC_BASE_URL), which
	// links lead below (portaldomain.OpenURL).
	BaseURL string
	// Now is the clock: time.Now when nil.
	Now func() time.Time
	// Logger is where failures no caller hears of are reported:
	// slog.Default() when nil.
	Logger *slog.Logger
}

func (s Settings) withDefaults() Settings {
	if s.Now == nil {
		s.Now = time.Now
	}
	if s.Logger == nil {
		s.Logger = slog.Default()
	}
	return s
}

// timestamp is the current time as stored and shown: UTC, milliseconds.
func (s Settings) timestamp() time.Time { return s.Now().UTC().Truncate(time.Millisecond) }

// Portal is the use cases of portal links: make one, revoke one (ending
// its session), open one (starting its session), and read a session.
type Portal struct {
	ws    Workspaces
	store Store
	s     Settings
}

// New returns the portal links' use cases.
func New(ws Workspaces, store Store, s Settings) *Portal {
	if ws == nil || store == nil {
		panic("portalapp: a dependency of the portal's use cases is nil")
	}
	return &Portal{ws: ws, store: store, s: s.withDefaults()}
}

// linkNotFound answers a link the workspace does not have (or no longer
// remembers).
func linkNotFound(linkID string) error {
	return fault.New(fault.NotFound, "portal link %q not found", clip.Runes(linkID, 64))
}

// linkEvent is an event of the link linkID of w. A link has one event of
// each type, keyed so that recording it again (a retried revocation) is
// harmless.
func linkEvent(t domain.EventType, w *domain.Workspace, actor domain.Actor, linkID, requestID string, at time.Time) domain.Event {
	e := domain.NewEvent(t, w, actor, domain.Target{Type: domain.TargetPortalLink, ID: linkID}, requestID, at)
	e.Key = w.ID() + "/portalLink/" + linkID + "/" + string(t)
	return e
}
