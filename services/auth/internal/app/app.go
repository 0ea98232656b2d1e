// Package app holds the auth service's use cases, one per file: issuing SDK
// tokens, checking and ending sessions, introspecting tokens for internal
// callers, and revoking tokens. It depends on the domain and on the
// Workspaces port below.
package app

import (
	"context"
	"time"

	"github.com/liveproctor/workspaces/pkg/ratelimit"
	"github.com/liveproctor/workspaces/pkg/ttlcache"
	"github.com/liveproctor/workspaces/services/auth/internal/domain"
)

// WorkspaceStatus is what the workspace service says of a workspace.
type WorkspaceStatus struct {
	Active      bool
	TokenCutoff time.Time // tokens issued at or before it are dead; zero: none
	// CallerLimit is the rate limit of the asking key pair's own workspace;
	// Off when it has none of its own.
	CallerLimit ratelimit.Limit
	// CallerKeyExpiresAt is when the asking key pair stops authenticating;
	// zero: it does not expire. A cached access check ends then.
	CallerKeyExpiresAt time.Time
}

// Limits guards the calls of key pairs. Over a limit, the error is
// Throttled.
type Limits interface {
	// CheckFailures refuses a client address that has failed to
	// authenticate too often lately, with appKey or at all; it comes
	// before any credential check.
	CheckFailures(ctx context.Context, appKey string) error
	// LimitKeyPair counts a call of a key pair whose credentials were
	// accepted against its rate limit: own when its workspace has one,
	// else the default.
	LimitKeyPair(ctx context.Context, appKey string, own ratelimit.Limit) error
}

// Planner is Limits that can hand both checks of a key pair's call to a
// GuardedStore, to run in the same step as the token's save.
type Planner interface {
	Plan(ctx context.Context, appKey string, own ratelimit.Limit) ratelimit.Planned
}

// GuardedStore is a token store that runs a login's limits and the save of
// its token as one step (on Redis: one round trip instead of three), and
// saves nothing when the limits refuse.
type GuardedStore interface {
	SaveGuarded(ctx context.Context, d domain.Digest, s domain.Session, limits ratelimit.Planned) error
}

// noLimits limits nothing.
type noLimits struct{}

func (noLimits) CheckFailures(context.Context, string) error                 { return nil }
func (noLimits) LimitKeyPair(context.Context, string, ratelimit.Limit) error { return nil }

// Workspaces asks the workspace service about a workspace, presenting the
// given Authorization header (the caller's Basic credentials, or the
// service's own). Errors are faults: Unauthenticated for bad credentials,
// PermissionDenied for a key pair without API access, NotFound for a
// workspace the credentials may not see, Unavailable when it cannot answer.
type Workspaces interface {
	Status(ctx context.Context, authorization, workspaceID string) (WorkspaceStatus, error)
	// RecordRevocation adds a revocation made here to the workspace's
	// audit trail: every session of user in it, or of the whole workspace
	// when user is empty, asked for by the key pair actorAppKey.
	RecordRevocation(ctx context.Context, authorization string, r Revocation) error
}

// Revocation is a revocation of SDK sessions, for the audit trail.
type Revocation struct {
	WorkspaceID string
	User        string // empty: every session of the workspace
	ActorAppKey string
}

// Settings are the application's tunables.
type Settings struct {
	// ServiceAuthorization is the Authorization header (Basic, a key pair
	// of the root workspace) the service presents when it checks a token's
	// workspace on its own behalf.
	ServiceAuthorization string
	// AccessCacheTTL bounds how long "these credentials may act for that
	// workspace" is reused for logins and logouts; AccessCacheSize bounds
	// how many such answers are kept.
	AccessCacheTTL  time.Duration
	AccessCacheSize int
}

// App is the auth application.
type App struct {
	store      domain.TokenStore
	workspaces Workspaces
	settings   Settings
	now        func() time.Time
	limits     Limits
	// planner and guarded are set when the limits and the store can run
	// a login's checks and save in one step (see CreateToken).
	planner  Planner
	guarded  GuardedStore
	launches Launches // nil: no LTI launches
	access   *ttlcache.Cache[accessKey, cachedAccess]
	// revoked remembers when each workspace's tokens were last revoked
	// here, so a cached "yes" from before a delete is not reused after it.
	revoked *ttlcache.Cache[string, time.Time]
	// forgotten remembers when the workspace service said each app key
	// was revoked or rotated, so a cached "yes" from before is not reused.
	forgotten *ttlcache.Cache[string, time.Time]
}

// Option changes how New builds an App.
type Option func(*App)

// WithLimits counts every key pair's calls against its rate limit.
func WithLimits(l Limits) Option { return func(a *App) { a.limits = l } }

// WithClock replaces time.Now, for tests.
func WithClock(now func() time.Time) Option { return func(a *App) { a.now = now } }

// New returns the application.
func New(store domain.TokenStore, workspaces Workspaces, settings Settings, opts ...Option) *App {
	if settings.AccessCacheTTL <= 0 {
		settings.AccessCacheTTL = 5 * time.Second
	}
	if settings.AccessCacheSize <= 0 {
		settings.AccessCacheSize = 10000
	}
	a := &App{store: store, workspaces: workspaces, settings: settings, limits: noLimits{}, now: time.Now}
	for _, opt := range opts {
		opt(a)
	}
	a.planner, _ = a.limits.(Planner)
	a.guarded, _ = store.(GuardedStore)
	a.access = ttlcache.New[accessKey, cachedAccess](settings.AccessCacheSize, settings.AccessCacheTTL, a.now)
	a.revoked = ttlcache.New[string, time.Time](settings.AccessCacheSize, settings.AccessCacheTTL, a.now)
	a.forgotten = ttlcache.New[string, time.Time](settings.AccessCacheSize, settings.AccessCacheTTL, a.now)
	return a
}
