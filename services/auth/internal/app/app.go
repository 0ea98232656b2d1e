// Package app holds the auth service's use cases, one per file: issuing SDK
// tokens, checking and ending sessions, introspecting tokens for internal
// callers, and revoking tokens. Every use case goes through the policy of
// policy.go (failed authentications, credentials, rate limits) first. It
// depends on the domain and on the ports it declares: Workspaces, Limits
// and, optionally, LoginStore.
package app

import (
	"context"
	"time"

	"github.com/liveproctor/workspaces/pkg/ttlcache"
	"github.com/liveproctor/workspaces/services/auth/internal/domain"
)

// WorkspaceStatus is what the workspace service says of a workspace.
type WorkspaceStatus struct {
	Active      bool
	TokenCutoff time.Time // tokens issued at or before it are dead; zero: none
	// CallerLimit is the rate limit of the asking key pair's own workspace;
	// Off when it has none of its own.
	CallerLimit RateLimit
	// CallerKeyExpiresAt is when the asking key pair stops authenticating;
	// zero: it does not expire. A cached access check ends then.
	CallerKeyExpiresAt time.Time
}

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

// ChangePublisher tells every replica of both services that key pairs
// changed (the cache bus), so that none reuses what it remembers of them.
// An error is Unavailable.
type ChangePublisher interface {
	PublishKeyPairsChanged(ctx context.Context, workspaceID string, appKeys []string) error
}

// noChanges publishes nothing: a single replica, in unit tests.
type noChanges struct{}

func (noChanges) PublishKeyPairsChanged(context.Context, string, []string) error { return nil }

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
	// logins is the store when it can run a login's limits and save in
	// one step (see CreateToken), and limits are in force; else nil.
	logins   LoginStore
	launches Launches      // nil: no LTI launches
	lti13    LTI13Launches // nil: no LTI 1.3 launches
	// remembered holds the workspace service's recent yeses (access.go).
	remembered *ttlcache.Loader[accessKey, cachedAccess]
	// changedWorkspaces and changedKeys remember when the cache bus last
	// told of a change to each workspace (deleted, undeleted, a new rate
	// limit) and each app key (revoked, rotated, expired), so that a
	// remembered "yes" from before is not reused (see holds).
	changedWorkspaces *ttlcache.Cache[string, time.Time]
	changedKeys       *ttlcache.Cache[string, time.Time]
	changes           ChangePublisher
}

// Option changes how New builds an App.
type Option func(*App)

// WithLimits puts the policy's limits in force (policy.go): failed
// authentications and the rates of key pairs and tokens.
func WithLimits(l Limits) Option { return func(a *App) { a.limits = l } }

// WithChangePublisher tells the other replicas of both services about key
// pairs a caller of ForgetKeyPairs says changed.
func WithChangePublisher(p ChangePublisher) Option { return func(a *App) { a.changes = p } }

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
	a := &App{store: store, workspaces: workspaces, settings: settings, limits: noLimits{}, now: time.Now, changes: noChanges{}}
	for _, opt := range opts {
		opt(a)
	}
	if _, off := a.limits.(noLimits); !off {
		a.logins, _ = store.(LoginStore)
	}
	a.remembered = ttlcache.NewLoader(ttlcache.New[accessKey, cachedAccess](settings.AccessCacheSize, settings.AccessCacheTTL, a.now),
		ttlcache.LoaderOptions{LoadTimeout: accessLoadTimeout})
	// A mark outlives every answer it refuses, and the grace after it.
	marks := settings.AccessCacheTTL + changeGrace
	a.changedWorkspaces = ttlcache.New[string, time.Time](settings.AccessCacheSize, marks, a.now)
	a.changedKeys = ttlcache.New[string, time.Time](settings.AccessCacheSize, marks, a.now)
	return a
}
