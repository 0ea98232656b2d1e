package app

import (
	"context"
	"errors"
	"fmt"

	"github.com/liveproctor/workspaces/pkg/fault"
	"github.com/liveproctor/workspaces/services/auth/internal/domain"
)

// Session returns the session of a live token: stored, unexpired, not
// revoked, and of a workspace that is active and was not deleted after the
// token was issued. Anything else is domain.ErrTokenNotFound; a store or
// service that cannot answer is Unavailable, never a yes.
func (a *App) Session(ctx context.Context, token domain.Token) (domain.Session, error) {
	if !token.Valid() {
		return domain.Session{}, domain.ErrTokenNotFound
	}
	s, err := a.store.Lookup(ctx, token.Digest())
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

// EndSession revokes the token presented; it must be live.
func (a *App) EndSession(ctx context.Context, token domain.Token) error {
	if _, err := a.Session(ctx, token); err != nil {
		return err
	}
	return a.store.Revoke(ctx, token.Digest())
}

// isNotFound reports a token that does not (or no longer) exist.
func isNotFound(err error) bool { return errors.Is(err, domain.ErrTokenNotFound) }

// isHidden reports a workspace the credentials may not see.
func isHidden(err error) bool { return fault.KindOf(err) == fault.NotFound }
