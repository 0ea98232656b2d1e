package app

import (
	"context"
	"fmt"
	"time"

	"github.com/liveproctor/workspaces/pkg/basicauth"
	"github.com/liveproctor/workspaces/services/auth/internal/domain"
)

// CreateToken issues an 8-hour token for a user of a live workspace that the
// credentials may act for.
//
// The client's address is first checked against its failed
// authentications, then the credentials, then the key pair's rate limit,
// and then the token is saved. When the credentials' access to the
// workspace is remembered (see authorize) and the store can, the checks
// and the save run as one step of the store: the usual login then costs
// one Redis round trip instead of three, and its order is the same.
func (a *App) CreateToken(ctx context.Context, authorization, email, workspaceID string) (domain.Token, domain.Session, error) {
	appKey, _, _ := basicauth.Parse(authorization)
	invalid := domain.CheckLogin(email, workspaceID)
	if invalid == nil && authorization != "" && a.planner != nil && a.guarded != nil {
		if st, ok := a.cachedAccess(newAccessKey(authorization, workspaceID), appKey); ok && st.Active {
			limits := a.planner.Plan(ctx, appKey, st.CallerLimit)
			return a.issueWith(email, workspaceID, func(d domain.Digest, s domain.Session) error {
				return a.guarded.SaveGuarded(ctx, d, s, limits)
			})
		}
	}
	if err := a.limits.CheckFailures(ctx, appKey); err != nil {
		return "", domain.Session{}, err
	}
	if invalid != nil {
		return "", domain.Session{}, invalid
	}
	if _, err := a.authorize(ctx, authorization, workspaceID, true); err != nil {
		return "", domain.Session{}, err
	}
	return a.issue(ctx, email, workspaceID)
}

// issue stores a new token of a session for email in workspaceID, from now
// for domain.TokenTTL.
func (a *App) issue(ctx context.Context, email, workspaceID string) (domain.Token, domain.Session, error) {
	return a.issueWith(email, workspaceID, func(d domain.Digest, s domain.Session) error {
		return a.store.Save(ctx, d, s)
	})
}

// issueWith makes a new token of a session for email in workspaceID, from
// now for domain.TokenTTL, and saves it with save.
func (a *App) issueWith(email, workspaceID string, save func(domain.Digest, domain.Session) error) (domain.Token, domain.Session, error) {
	now := a.now().UTC().Truncate(time.Millisecond)
	s := domain.Session{Email: email, WorkspaceID: workspaceID, IssuedAt: now, ExpiresAt: now.Add(domain.TokenTTL)}
	token := domain.NewToken()
	if err := save(token.Digest(), s); err != nil {
		return "", domain.Session{}, fmt.Errorf("save token: %w", err)
	}
	return token, s, nil
}
