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
// burst of logins costs one call, unless the cache bus has told of a
// change to the workspace or the key pair since (holds). A remembered yes
// in steady use is asked again in the background shortly before it
// expires, and the logins that find none wait on one call between them
// (ttlcache.Loader): a busy key pair's logins never all wait on, or all
// make, the same call. A replica that missed the bus's message (Redis
// down) may reuse a "yes" for up to AccessCacheTTL after a delete; a
// token it issues then is dead on first use all the same (see Session).
func (a *App) access(ctx context.Context, authorization, appKey, workspaceID string) (WorkspaceStatus, error) {
	if authorization == "" {
		return WorkspaceStatus{}, errNoCredentials
	}
	key := newAccessKey(authorization, workspaceID)
	if cached, ok := a.peekAccess(ctx, key, authorization, appKey); ok {
		if a.holds(cached, key, appKey) {
			return cached.status, nil
		}
		a.remembered.Forget(key) // changed or expired since: ask again
	}
	load := a.accessLoad(authorization, appKey, workspaceID)
	for attempt := 1; ; attempt++ {
		cached, err := a.remembered.Get(ctx, key, load)
		if err != nil {
			return WorkspaceStatus{}, err
		}
		// A load that began before a change was told may have stored
		// its answer since: such an answer is asked again, once.
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
// only for a live workspace (an undelete must be seen at once), and not
// within changeGrace of a change the cache bus told of.
func (a *App) accessLoad(authorization, appKey, workspaceID string) ttlcache.LoadFunc[cachedAccess] {
	return func(ctx context.Context) (cachedAccess, bool, error) {
		at := a.now()
		st, err := a.workspaces.Status(ctx, authorization, workspaceID)
		if err != nil {
			return cachedAccess{}, false, err
		}
		changed, ok := a.changedAt(workspaceID, appKey)
		settled := !ok || at.After(changed.Add(changeGrace))
		return cachedAccess{status: st, at: at}, st.Active && settled, nil
	}
}

// changeGrace is how long after the cache bus tells of a change the
// workspace service's answers are used but not remembered. The
// workspace-service replica that answers may hear the same message a
// little later than this one, and answer from its credential cache as
// before the change: such an answer would otherwise be reused for
// AccessCacheTTL. One PUBLISH reaches every subscriber within
// milliseconds; a second leaves room for a busy replica, and costs only
// this: for that second, each login of the changed key pairs asks the
// workspace service (one call for the logins that wait together).
const changeGrace = time.Second

// rememberedAccess returns the remembered answer for the credentials (of
// app key appKey) and the workspace, when there is one and it still holds;
// it never calls the workspace service, but may start the background
// refresh of an answer near its expiry.
func (a *App) rememberedAccess(ctx context.Context, authorization, appKey, workspaceID string) (WorkspaceStatus, bool) {
	key := newAccessKey(authorization, workspaceID)
	cached, ok := a.peekAccess(ctx, key, authorization, appKey)
	if !ok || !a.holds(cached, key, appKey) {
		return WorkspaceStatus{}, false
	}
	return cached.status, true
}

// peekAccess is the loader's Peek, with the load built only for an answer
// due for its background refresh: built on every login, it would be one
// more allocation each (the closure escapes to the heap).
func (a *App) peekAccess(ctx context.Context, key accessKey, authorization, appKey string) (cachedAccess, bool) {
	cached, ok, due := a.remembered.Lookup(key)
	if due {
		cached, ok = a.remembered.Peek(ctx, key, a.accessLoad(authorization, appKey, key.workspaceID))
	}
	return cached, ok
}

// holds reports whether a remembered answer still holds: the cache bus
// told of no change to the workspace or the key pair since it was given,
// and the key pair has not expired.
func (a *App) holds(cached cachedAccess, key accessKey, appKey string) bool {
	if changed, ok := a.changedAt(key.workspaceID, appKey); ok && !cached.at.After(changed) {
		return false
	}
	if exp := cached.status.CallerKeyExpiresAt; !exp.IsZero() && !a.now().Before(exp) {
		return false // the key pair expired: the workspace service now refuses it
	}
	return true
}

// changedAt returns when the cache bus last told of a change to the
// workspace or the key pair, if that is remembered.
func (a *App) changedAt(workspaceID, appKey string) (time.Time, bool) {
	w, wok := a.changedWorkspaces.Get(workspaceID)
	k, kok := a.changedKeys.Get(appKey)
	if kok && (!wok || k.After(w)) {
		return k, true
	}
	return w, wok
}

// KeyPairsChanged is the cache bus telling that the pairs appKeys were
// revoked, rotated or removed as expired: no access check of theirs
// remembered before is reused.
func (a *App) KeyPairsChanged(appKeys []string) {
	now := a.now()
	for _, k := range appKeys {
		a.mark(a.changedKeys, k, now)
	}
}

// mark remembers a change in marks. A mark dropped for room (more changes
// within a cache's life than it holds) would let an answer from before
// its change be reused: then every remembered answer goes instead.
func (a *App) mark(marks *ttlcache.Cache[string, time.Time], key string, at time.Time) {
	if marks.Set(key, at) {
		a.remembered.Clear()
	}
}

// WorkspaceChanged is the cache bus telling that a workspace was deleted
// or undeleted, or its rate limit changed: no access check remembered
// before is reused, neither to the workspace nor of its pairs appKeys
// (the rate limit they carry is the workspace's, whichever workspace they
// act for).
func (a *App) WorkspaceChanged(workspaceID string, appKeys []string) {
	a.mark(a.changedWorkspaces, workspaceID, a.now())
	a.KeyPairsChanged(appKeys)
}

// ForgetAllAccess drops every remembered access check: the cache bus may
// have told of changes this replica did not hear.
func (a *App) ForgetAllAccess() { a.remembered.Clear() }

// ForgetKeyPairs stops every replica reusing the access checks of key
// pairs of a workspace the credentials may act for: this one at once, the
// others through the cache bus. The workspace service tells of its own
// changes on the bus; this is the same for a caller of the gRPC API.
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
	a.KeyPairsChanged(appKeys)
	return a.changes.PublishKeyPairsChanged(ctx, workspaceID, appKeys)
}

// maxForgetKeys bounds the app keys of one ForgetKeyPairs call.
const maxForgetKeys = 100
