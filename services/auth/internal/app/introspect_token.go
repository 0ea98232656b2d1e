package app

import (
	"context"

	"github.com/liveproctor/workspaces/services/auth/internal/domain"
)

// IntrospectToken tells an internal caller (IntrospectSdkToken) whether a
// token is live, and whose it is. A token of a workspace the credentials may
// not act for is reported as not live, so the answer reveals nothing about
// other tenants.
func (a *App) IntrospectToken(ctx context.Context, authorization string, token domain.Token) (domain.Session, bool, error) {
	if _, err := a.admit(ctx, opIntrospectToken, authorization); err != nil {
		return domain.Session{}, false, err
	}
	if authorization == "" {
		return domain.Session{}, false, errNoCredentials
	}
	s, err := a.session(ctx, token, a.store.Lookup)
	if isNotFound(err) {
		return domain.Session{}, false, nil
	}
	if err != nil {
		return domain.Session{}, false, err
	}
	if _, err := a.grant(ctx, authorization, s.WorkspaceID, true); err != nil {
		if isHidden(err) {
			return domain.Session{}, false, nil
		}
		return domain.Session{}, false, err
	}
	return s, true, nil
}
