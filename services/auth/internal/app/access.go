package app

import (
	"context"
	"crypto/sha256"
	"fmt"
	"time"

	"github.com/liveproctor/workspaces/pkg/basicauth"
	"github.com/liveproctor/workspaces/pkg/fault"
	"github.com/liveproctor/workspaces/pkg/ratelimit"
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

// authorize checks that the credentials may act for the workspace: it is
// theirs or one they manage. The workspace service decides; a yes is kept
// for AccessCacheTTL so a burst of logins costs one call, unless the
// workspace's tokens were revoked here since (the workspace service revokes
// them when it deletes the workspace). A deleted workspace is answered as
// not found when live is set. Another replica may reuse a "yes" for up to
// AccessCacheTTL after a delete; a token it issues then is dead on first
// use all the same (see Session).
func (a *App) authorize(ctx context.Context, authorization, workspaceID string, live bool) (WorkspaceStatus, error) {
	if authorization == "" {
		return WorkspaceStatus{}, errNoCredentials
	}
	key := newAccessKey(authorization, workspaceID)
	appKey, _, _ := basicauth.Parse(authorization)
	st, ok := a.cachedAccess(key, appKey)
	if !ok {
		at := a.now()
		var err error
		st, err = a.workspaces.Status(ctx, authorization, workspaceID)
		if k := fault.KindOf(err); k == fault.NotFound || k == fault.PermissionDenied {
			// The credentials are good, the workspace not theirs (or
			// the key pair not for the API): the call still counts.
			if lerr := a.limits.LimitKeyPair(ctx, appKey, ratelimit.Limit{}); lerr != nil {
				return WorkspaceStatus{}, lerr
			}
			return WorkspaceStatus{}, err
		}
		if err != nil {
			return WorkspaceStatus{}, err
		}
		if st.Active {
			// Only a live workspace is remembered: an undelete must be
			// seen at once.
			a.access.Set(key, cachedAccess{status: st, at: at})
		}
	}
	if err := a.limits.LimitKeyPair(ctx, appKey, st.CallerLimit); err != nil {
		return WorkspaceStatus{}, err
	}
	if live && !st.Active {
		return WorkspaceStatus{}, fault.New(fault.NotFound, "workspace %q not found", workspaceID)
	}
	return st, nil
}

// cachedAccess returns the workspace service's answer for the credentials
// (of app key appKey) and workspace of key, when one is remembered and
// still holds: no revocation of the workspace's tokens, no revocation or
// rotation of the key pair, and no expiry of the key pair since it was
// given.
func (a *App) cachedAccess(key accessKey, appKey string) (WorkspaceStatus, bool) {
	cached, ok := a.access.Get(key)
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
	if err := domain.CheckWorkspaceID(workspaceID); err != nil {
		return err
	}
	if len(appKeys) > maxForgetKeys {
		return fault.InvalidField("appKeys", fmt.Sprintf("must have at most %d elements", maxForgetKeys))
	}
	if _, err := a.authorize(ctx, authorization, workspaceID, false); err != nil {
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
