// Package app holds the workspace use cases, one per file. It depends on the
// domain and on the small interfaces below, which adapters implement.
package app

import (
	"context"
	"log/slog"
	"sync/atomic"
	"time"

	"github.com/liveproctor/workspaces/pkg/ttlcache"
	"github.com/liveproctor/workspaces/services/workspace/internal/domain"
	ltidomain "github.com/liveproctor/workspaces/services/workspace/internal/lti/domain"
)

// SecretBox protects key-pair secrets at rest. Seal and Open encrypt and
// decrypt (the keys route returns secrets); Digest is a keyed hash used to
// verify a secret without decrypting it. Each binds the secret to its app
// key, so stored values cannot be moved between key pairs.
type SecretBox interface {
	Seal(appKey, secret string) ([]byte, error)
	Open(appKey string, sealed []byte) (string, error)
	Digest(appKey, secret string) []byte
}

// TokenRevoker revokes every SDK token of a workspace in the auth service.
// Deleting a workspace calls it after the delete is stored; it returns at
// once and keeps trying in the background. Tokens of a deleted workspace
// are dead whether or not it has succeeded yet: the auth service checks
// each token's workspace status (see GetWorkspaceStatus). requestID is the
// delete's, which the revocation's audit event carries.
type TokenRevoker interface {
	RevokeWorkspaceTokens(workspaceID, requestID string)
}

// ChangeNotifier tells every replica of both services that what they may
// have cached about key pairs changed (the credential cache here, the
// remembered access checks in the auth service), so that a revocation, a
// delete or a new rate limit takes effect everywhere within about a second
// instead of within the caches' TTLs. It is called once the change is
// stored and returns when the message is sent or has failed: a failure is
// only logged, and the caches' TTLs are then the bound.
type ChangeNotifier interface {
	// KeyPairsChanged: the pairs appKeys of the workspace were revoked,
	// rotated or removed as expired.
	KeyPairsChanged(ctx context.Context, workspaceID string, appKeys []string)
	// WorkspaceChanged: the workspace was deleted or undeleted, or its rate
	// limit changed; appKeys are all its pairs.
	WorkspaceChanged(ctx context.Context, workspaceID string, appKeys []string)
}

// noChanges is the ChangeNotifier of a service without Redis, which tells
// no other replica: there, caches end their entries within their TTLs.
type noChanges struct{}

func (noChanges) KeyPairsChanged(context.Context, string, []string)  {}
func (noChanges) WorkspaceChanged(context.Context, string, []string) {}

// Settings are the application's tunables.
type Settings struct {
	// LTIToolURLs are the tool's URLs a create result gives (its LTI
	// configuration and launch URLs), below the public base URL.
	LTIToolURLs ltidomain.ToolURLs
	// CredentialCacheTTL bounds how long a credential check is reused, and so
	// how long a deleted workspace's key may keep working on other replicas
	// when they miss the ChangeNotifier's message.
	CredentialCacheTTL time.Duration
	// CredentialCacheSize bounds the number of app keys remembered.
	CredentialCacheSize int
}

// App is the workspace application.
type App struct {
	repo     domain.Repository
	secrets  SecretBox
	settings Settings
	now      func() time.Time
	creds    *ttlcache.Loader[string, credential]
	revoker  TokenRevoker // nil: no auth service to tell
	changes  ChangeNotifier
	uses     *keyUses
	logger   *slog.Logger

	// rootID is the root workspace's id, known once Bootstrap has run;
	// only its key pairs may record session revocations (and, through
	// LTIPort, verify LTI launches).
	rootID atomic.Pointer[string]

	limits Limits         // what Admit counts calls against
	portal PortalSessions // the portal sessions Admit admits

	events        EventLog // nil: events stay in the outboxes
	eventSettings EventSettings
	eventIDs      domain.EventIDSource // ids in the order events are published
	waker         DeliveryWaker        // nil: no webhook deliveries to wake
}

// Option changes how New builds an App.
type Option func(*App)

// WithTokenRevoker tells the auth service about deleted workspaces.
func WithTokenRevoker(r TokenRevoker) Option { return func(a *App) { a.revoker = r } }

// WithChangeNotifier tells the other replicas, of this service and of the
// auth service, about changed key pairs and workspaces.
func WithChangeNotifier(n ChangeNotifier) Option { return func(a *App) { a.changes = n } }

// WithLogger is where background work (recording key uses, sweeping
// expired key pairs) reports failures; slog.Default() otherwise.
func WithLogger(l *slog.Logger) Option { return func(a *App) { a.logger = l } }

// WithClock replaces time.Now, for tests.
func WithClock(now func() time.Time) Option { return func(a *App) { a.now = now } }

// New returns the application over a repository and a secret box.
func New(repo domain.Repository, secrets SecretBox, settings Settings, opts ...Option) *App {
	if settings.CredentialCacheTTL <= 0 {
		settings.CredentialCacheTTL = 10 * time.Second
	}
	if settings.CredentialCacheSize <= 0 {
		settings.CredentialCacheSize = 10000
	}
	a := &App{repo: repo, secrets: secrets, settings: settings, now: time.Now, logger: slog.Default(), limits: noLimits{},
		portal: noPortalSessions{}, changes: noChanges{}}
	for _, opt := range opts {
		opt(a)
	}
	a.creds = ttlcache.NewLoader(ttlcache.New[string, credential](settings.CredentialCacheSize, settings.CredentialCacheTTL, a.now),
		ttlcache.LoaderOptions{LoadTimeout: credentialLoadTimeout})
	a.uses = newKeyUses(settings.CredentialCacheSize, a.now)
	return a
}

// isRoot reports whether caller is a key pair of the root workspace, known
// once Bootstrap has run (an administrator in the root's portal is not).
func (a *App) isRoot(caller domain.Caller) bool {
	root := a.rootID.Load()
	return root != nil && caller.WorkspaceID == *root && !caller.InPortal()
}

// timestamp is the current time as stored and shown: UTC, milliseconds.
func (a *App) timestamp() time.Time {
	return a.now().UTC().Truncate(time.Millisecond)
}
