package app

import (
	"context"
	"errors"
	"fmt"

	"github.com/liveproctor/workspaces/pkg/fault"
	"github.com/liveproctor/workspaces/services/auth/internal/domain"
)

// Session returns the session of the live token an Authorization: Bearer
// header presents (see session), with the LTI 1.3 launch that opened it:
// the one read of a session that shows it.
func (a *App) Session(ctx context.Context, authorization string) (domain.Session, error) {
	token, err := a.admit(ctx, opSession, authorization)
	if err != nil {
		return domain.Session{}, err
	}
	s, err := a.session(ctx, token, a.store.LookupWithLaunch)
	return s, a.settle(ctx, opSession, err)
}

// EndSession revokes the token an Authorization: Bearer header presents;
// it must be live.
func (a *App) EndSession(ctx context.Context, authorization string) error {
	token, err := a.admit(ctx, opEndSession, authorization)
	if err != nil {
		return err
	}
	if _, err := a.session(ctx, token, a.store.Lookup); err != nil {
		return a.settle(ctx, opEndSession, err)
	}
	return a.settle(ctx, opEndSession, a.store.Revoke(ctx, token.Digest()))
}

// session returns the session of a live token, as lookup (the store's
// Lookup, or LookupWithLaunch) reads it: stored, unexpired, not revoked,
// and of a workspace that is active and was not deleted after the token
// was issued. Anything else is domain.ErrTokenNotFound; a store or
// service that cannot answer is Unavailable, never a yes.
func (a *App) session(ctx context.Context, token domain.Token, lookup func(context.Context, domain.Digest) (domain.Session, error)) (domain.Session, error) {
	if !token.Valid() {
		return domain.Session{}, domain.ErrTokenNotFound
	}
	s, err := lookup(ctx, token.Digest())
	if err != nil {
		return domain.Session{}, err
	}
	if !a.now().Before(s.ExpiresAt) {
		return domain.Session{}, domain.ErrTokenNotFound
	}
	// Not cached: a delete must end the workspace's sessions at once, even
	// if the revocation the workspace service sends has not arrived.
	st, err := a.workspaces.Status(ctx, a.settings.ServiceAuthorization, s.WorkspaceID)
	switch {
	case fault.KindOf(err) == fault.NotFound:
		return domain.Session{}, domain.ErrTokenNotFound
	case err != nil:
		if k := fault.KindOf(err); k == fault.Unauthenticated || k == fault.PermissionDenied {
			// The service's own key pair was refused: a configuration
			// error, not the caller's.
			return domain.Session{}, fault.Wrap(fault.Internal, err, "internal error")
		}
		return domain.Session{}, fmt.Errorf("check the token's workspace: %w", err)
	case !st.Active || !st.TokenCutoff.IsZero() && !s.IssuedAt.After(st.TokenCutoff):
		return domain.Session{}, domain.ErrTokenNotFound
	}
	return s, nil
}

// isNotFound reports a token that does not (or no longer) exist.
func isNotFound(err error) bool { return errors.Is(err, domain.ErrTokenNotFound) }

// isHidden reports a workspace the credentials may not see.
func isHidden(err error) bool { return fault.KindOf(err) == fault.NotFound }
