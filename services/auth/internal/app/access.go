package app

import (
	"context"
	"crypto/sha256"
	"fmt"
	"time"

	"github.com/liveproctor/workspaces/pkg/fault"
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
// the workspace). Another replica may reuse a "yes" for up to
// AccessCacheTTL after a delete; a token it issues then is dead on first
// use all the same (see Session).
func (a *App) access(ctx context.Context, authorization, appKey, workspaceID string) (WorkspaceStatus, error) {
	if authorization == "" {
		return WorkspaceStatus{}, errNoCredentials
	}
	key := newAccessKey(authorization, workspaceID)
	if st, ok := a.cachedAccess(key, appKey); ok {
		return st, nil
	}
	at := a.now()
	st, err := a.workspaces.Status(ctx, authorization, workspaceID)
	if err != nil {
		return WorkspaceStatus{}, err
	}
	if st.Active {
		// Only a live workspace is remembered: an undelete must be seen
		// at once.
		a.remembered.Set(key, cachedAccess{status: st, at: at})
	}
	return st, nil
}

// cachedAccess returns the workspace service's answer for the credentials
// (of app key appKey) and workspace of key, when one is remembered and
// still holds: no revocation of the workspace's tokens, no revocation or
// rotation of the key pair, and no expiry of the key pair since it was
// given.
func (a *App) cachedAccess(key accessKey, appKey string) (WorkspaceStatus, bool) {
	cached, ok := a.remembered.Get(key)
	if !ok {
		return WorkspaceStatus{}, false
	}
	if revokedAt, revoked := a.revoked.Get(key.workspaceID); revoked && !cached.at.After(revokedAt) {
		return WorkspaceStatus{}, false
	}
	if forgottenAt, forgotten := a.forgotten.Get(appKey); forgotten && !cached.at.After(forgottenAt) {
		return WorkspaceStatus{}, false
	}
	if exp := cached.status.CallerKeyExpiresAt; !exp.IsZero() && !a.now().Before(exp) {
		return WorkspaceStatus{}, false // the key pair expired: the workspace service now refuses it
	}
	return cached.status, true
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
