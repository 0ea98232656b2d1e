package app

import (
	"context"
	"crypto/sha256"
	"fmt"
	"time"

	"github.com/liveproctor/workspaces/pkg/fault"
	"github.com/liveproctor/workspaces/pkg/ttlcache"
	"github.com/liveproctor/workspaces/services/auth/internal/domain"
)

// cachedAccess is a workspace service answer and when it was received.
type cachedAccess struct {
	status WorkspaceStatus
	at     time.Time
}

// accessKey identifies "these credentials, that workspace" in the cache
// without keeping the credentials themselves.
type accessKey struct {
	credentials [sha256.Size]byte
	workspaceID string
}

func newAccessKey(authorization, workspaceID string) accessKey {
	return accessKey{credentials: sha256.Sum256([]byte(authorization)), workspaceID: workspaceID}
}

var errNoCredentials = fault.New(fault.Unauthenticated,
	"missing credentials: send Authorization: Basic base64(appKey:appSecret)")

// access answers whether the credentials (of app key appKey) may act for
// the workspace: it is theirs or one they manage. The workspace service
// decides; a yes for a live workspace is kept for AccessCacheTTL so a
// burst of logins costs one call, unless the workspace's tokens were
// revoked here since (the workspace service revokes them when it deletes
// the workspace). A remembered yes in steady use is asked again in the
// background shortly before it expires, and the logins that find none wait
// on one call between them (ttlcache.Loader): a busy key pair's logins
// never all wait on, or all make, the same call. Another replica may
// reuse a "yes" for up to AccessCacheTTL after a delete; a token it issues
// then is dead on first use all the same (see Session).
func (a *App) access(ctx context.Context, authorization, appKey, workspaceID string) (WorkspaceStatus, error) {
	if authorization == "" {
		return WorkspaceStatus{}, errNoCredentials
	}
	key := newAccessKey(authorization, workspaceID)
	if cached, ok := a.peekAccess(ctx, key, authorization, workspaceID); ok {
		if a.holds(cached, key, appKey) {
			return cached.status, nil
		}
		a.remembered.Forget(key) // revoked, forgotten or expired since: ask again
	}
	load := a.accessLoad(authorization, workspaceID)
	for attempt := 1; ; attempt++ {
		cached, err := a.remembered.Get(ctx, key, load)
		if err != nil {
			return WorkspaceStatus{}, err
		}
		// A load that began before a revocation may have stored its
		// answer since: such an answer is asked again, once.
		if attempt == 2 || a.holds(cached, key, appKey) {
			return cached.status, nil
		}
		a.remembered.Forget(key)
	}
}

// accessLoadTimeout bounds one call that refreshes a remembered access:
// it runs for every login waiting on it, whatever their own deadlines.
const accessLoadTimeout = 5 * time.Second

// accessLoad asks the workspace service for the credentials' access to
// the workspace; the answer keeps when it was asked, and is remembered
// only for a live workspace (an undelete must be seen at once).
func (a *App) accessLoad(authorization, workspaceID string) ttlcache.LoadFunc[cachedAccess] {
	return func(ctx context.Context) (cachedAccess, bool, error) {
		at := a.now()
		st, err := a.workspaces.Status(ctx, authorization, workspaceID)
		if err != nil {
			return cachedAccess{}, false, err
		}
		return cachedAccess{status: st, at: at}, st.Active, nil
	}
}

// rememberedAccess returns the remembered answer for the credentials (of
// app key appKey) and the workspace, when there is one and it still holds;
// it never calls the workspace service, but may start the background
// refresh of an answer near its expiry.
func (a *App) rememberedAccess(ctx context.Context, authorization, appKey, workspaceID string) (WorkspaceStatus, bool) {
	key := newAccessKey(authorization, workspaceID)
	cached, ok := a.peekAccess(ctx, key, authorization, workspaceID)
	if !ok || !a.holds(cached, key, appKey) {
		return WorkspaceStatus{}, false
	}
	return cached.status, true
}

// peekAccess is the loader's Peek, with the load built only for an answer
// due for its background refresh: built on every login, it would be one
// more allocation each (the closure escapes to the heap).
func (a *App) peekAccess(ctx context.Context, key accessKey, authorization, workspaceID string) (cachedAccess, bool) {
	cached, ok, due := a.remembered.Lookup(key)
	if due {
		cached, ok = a.remembered.Peek(ctx, key, a.accessLoad(authorization, workspaceID))
	}
	return cached, ok
}

// holds reports whether a remembered answer still holds: no revocation of
// the workspace's tokens, no revocation or rotation of the key pair, and
// no expiry of the key pair since it was given.
func (a *App) holds(cached cachedAccess, key accessKey, appKey string) bool {
	if revokedAt, revoked := a.revoked.Get(key.workspaceID); revoked && !cached.at.After(revokedAt) {
		return false
	}
	if forgottenAt, forgotten := a.forgotten.Get(appKey); forgotten && !cached.at.After(forgottenAt) {
		return false
	}
	if exp := cached.status.CallerKeyExpiresAt; !exp.IsZero() && !a.now().Before(exp) {
		return false // the key pair expired: the workspace service now refuses it
	}
	return true
}

// ForgetKeyPairs stops this replica reusing the access checks of key
// pairs of a workspace the credentials may act for: the workspace service
// calls it after revoking, rotating or sweeping them, so their next login
// is checked again (and refused once they no longer authenticate).
func (a *App) ForgetKeyPairs(ctx context.Context, authorization, workspaceID string, appKeys []string) error {
	if _, err := a.admit(ctx, opForgetKeyPairs, authorization); err != nil {
		return err
	}
	if err := domain.CheckWorkspaceID(workspaceID); err != nil {
		return err
	}
	if len(appKeys) > maxForgetKeys {
		return fault.InvalidField("appKeys", fmt.Sprintf("must have at most %d elements", maxForgetKeys))
	}
	if _, err := a.grant(ctx, authorization, workspaceID, false); err != nil {
		return err
	}
	now := a.now()
	for _, k := range appKeys {
		a.forgotten.Set(k, now)
	}
	return nil
}

// maxForgetKeys bounds the app keys of one ForgetKeyPairs call.
const maxForgetKeys = 100
