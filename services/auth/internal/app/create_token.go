package app

import (
	"context"
	"fmt"
	"time"

	"github.com/liveproctor/workspaces/services/auth/internal/domain"
)

// CreateToken issues an 8-hour token for a user of a live workspace that the
// credentials may act for.
func (a *App) CreateToken(ctx context.Context, authorization, email, workspaceID string) (domain.Token, domain.Session, error) {
	if err := domain.CheckLogin(email, workspaceID); err != nil {
		return "", domain.Session{}, err
	}
	if _, err := a.authorize(ctx, authorization, workspaceID, true); err != nil {
		return "", domain.Session{}, err
	}
	return a.issue(ctx, email, workspaceID)
}

// issue stores a new token of a session for email in workspaceID, from now
// for domain.TokenTTL.
func (a *App) issue(ctx context.Context, email, workspaceID string) (domain.Token, domain.Session, error) {
	now := a.now().UTC().Truncate(time.Millisecond)
	s := domain.Session{Email: email, WorkspaceID: workspaceID, IssuedAt: now, ExpiresAt: now.Add(domain.TokenTTL)}
	token := domain.NewToken()
	if err := a.store.Save(ctx, token.Digest(), s); err != nil {
		return "", domain.Session{}, fmt.Errorf("save token: %w", err)
	}
	return token, s, nil
}
