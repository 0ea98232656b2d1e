package app

import (
	"context"
	"crypto/subtle"
	"errors"
	"slices"
	"time"

	"github.com/liveproctor/workspaces/pkg/fault"
	"github.com/liveproctor/workspaces/services/workspace/internal/domain"
)

// ErrBadCredentials answers every failed credential check alike, so a caller
// cannot tell an unknown key from a wrong secret or a deleted workspace.
var ErrBadCredentials = fault.New(fault.Unauthenticated, "invalid credentials: send Authorization: Basic base64(appKey:appSecret) with a key pair of an active workspace")

// credential is what a credential check needs of a key pair, cached so the
// hot path does not read the database on every request. It holds the
// secret's digest, never the secret.
type credential struct {
	known       bool // false: no active workspace has this app key
	workspaceID string
	digest      []byte
	tags        []domain.Tag
	restAccess  bool
	rateLimit   *domain.RateLimit // the workspace's own; nil: the default
	// expiresAt is when the pair stops authenticating (zero: never),
	// checked against the clock on every use, so a cached credential never
	// outlives its pair.
	expiresAt time.Time
}

// Authenticate returns the caller that owns the key pair.
func (a *App) Authenticate(ctx context.Context, appKey, appSecret string) (domain.Caller, error) {
	cred, err := a.credential(ctx, appKey)
	if err != nil {
		return domain.Caller{}, err
	}
	// Hash even for unknown keys so both paths cost the same.
	digest := a.secrets.Digest(appKey, appSecret)
	now := a.now()
	if !cred.known || subtle.ConstantTimeCompare(digest, cred.digest) != 1 ||
		(!cred.expiresAt.IsZero() && !now.Before(cred.expiresAt)) {
		return domain.Caller{}, ErrBadCredentials
	}
	a.uses.note(appKey, now)
	return domain.Caller{
		WorkspaceID:  cred.workspaceID,
		AppKey:       appKey,
		Tags:         slices.Clone(cred.tags),
		RESTAccess:   cred.restAccess,
		RateLimit:    cred.rateLimit,
		KeyExpiresAt: cred.expiresAt,
	}, nil
}

// credential returns what a credential check needs of appKey's pair. It
// is remembered for CredentialCacheTTL; a pair in steady use is read again
// in the background shortly before that, and the checks that find none
// wait on one read between them (ttlcache.Loader), so a busy pair's
// requests never all read the store at once.
func (a *App) credential(ctx context.Context, appKey string) (credential, error) {
	if cred, ok, due := a.creds.Lookup(appKey); ok && !due {
		return cred, nil // no load to build: it would escape to the heap
	}
	return a.creds.Get(ctx, appKey, func(ctx context.Context) (credential, bool, error) {
		cred, err := a.readCredential(ctx, appKey)
		return cred, true, err // a failed read is never kept
	})
}

// credentialLoadTimeout bounds one read of a pair's credential, which every
// check waiting on it shares.
const credentialLoadTimeout = 5 * time.Second

// readCredential reads appKey's pair from the store; an unknown one, or a
// deleted workspace's, is a credential that is not known.
func (a *App) readCredential(ctx context.Context, appKey string) (credential, error) {
	w, err := a.repo.GetByAppKey(ctx, appKey)
	switch {
	case errors.Is(err, domain.ErrNotFound):
		return credential{}, nil
	case err != nil:
		return credential{}, err
	}
	if w.Deleted() {
		return credential{}, nil
	}
	k, ok := w.KeyByAppKey(appKey)
	if !ok {
		return credential{}, nil
	}
	cred := credential{known: true, workspaceID: w.ID(), digest: k.SecretDigest, tags: k.Tags,
		restAccess: k.HasRESTAccess(), expiresAt: k.ExpiresAt}
	if r, ok := w.RateLimit(); ok {
		cred.rateLimit = &r
	}
	return cred, nil
}

// forgetKeys drops a workspace's key pairs from the credential cache after
// a change of the workspace (a delete, an undelete, a new rate limit), so
// that it takes effect at once on this replica, and tells the others.
func (a *App) forgetKeys(ctx context.Context, w *domain.Workspace) {
	appKeys := make([]string, 0, len(w.Keys()))
	for _, k := range w.Keys() {
		appKeys = append(appKeys, k.AppKey)
	}
	a.ForgetCredentials(appKeys...)
	a.changes.WorkspaceChanged(ctx, w.ID(), appKeys)
}

// forgetKeyPairs drops key pairs that changed (revoked, rotated, expired)
// from this replica's credential cache at once, and tells the others.
func (a *App) forgetKeyPairs(ctx context.Context, workspaceID string, appKeys ...string) {
	a.ForgetCredentials(appKeys...)
	a.changes.KeyPairsChanged(ctx, workspaceID, appKeys)
}

// ForgetCredentials drops the cached credentials of appKeys: another
// replica changed their pairs or their workspace (see ChangeNotifier).
func (a *App) ForgetCredentials(appKeys ...string) {
	for _, k := range appKeys {
		a.creds.Forget(k)
	}
}

// ForgetAllCredentials drops every cached credential: a change another
// replica announced may have gone by unheard.
func (a *App) ForgetAllCredentials() { a.creds.Clear() }
