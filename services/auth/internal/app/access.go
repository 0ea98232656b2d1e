package app

import (
	"context"
	"crypto/sha256"
	"time"

	"github.com/liveproctor/workspaces/pkg/basicauth"
	"github.com/liveproctor/workspaces/pkg/fault"
	"github.com/liveproctor/workspaces/pkg/ratelimit"
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
	key := accessKey{credentials: sha256.Sum256([]byte(authorization)), workspaceID: workspaceID}
	cached, ok := a.access.Get(key)
	if revokedAt, revoked := a.revoked.Get(workspaceID); ok && revoked && !cached.at.After(revokedAt) {
		ok = false
	}
	st := cached.status
	if !ok {
		at := a.now()
		var err error
		st, err = a.workspaces.Status(ctx, authorization, workspaceID)
		if k := fault.KindOf(err); k == fault.NotFound || k == fault.PermissionDenied {
			// The credentials are good, the workspace not theirs (or
			// the key pair not for the API): the call still counts.
			if lerr := a.limit(ctx, authorization, ratelimit.Limit{}); lerr != nil {
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
	if err := a.limit(ctx, authorization, st.CallerLimit); err != nil {
		return WorkspaceStatus{}, err
	}
	if live && !st.Active {
		return WorkspaceStatus{}, fault.New(fault.NotFound, "workspace %q not found", workspaceID)
	}
	return st, nil
}

// limit counts a call of credentials the workspace service accepted against
// their key pair's rate limit (own, or the default when Off).
func (a *App) limit(ctx context.Context, authorization string, own ratelimit.Limit) error {
	appKey, _, _ := basicauth.Parse(authorization)
	return a.limits.LimitKeyPair(ctx, appKey, own)
}
