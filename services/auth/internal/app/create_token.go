package app

import (
	"context"
	"fmt"
	"time"

	"github.com/liveproctor/workspaces/pkg/basicauth"
	"github.com/liveproctor/workspaces/services/auth/internal/domain"
)

// CreateToken issues an 8-hour token for a user of a live workspace that the
// credentials may act for, through the policy's steps in order (policy.go):
// the client address's failed authentications, then the credentials, then
// the key pair's rate limit, and then the token is saved. When the
// credentials' access to the workspace is remembered and the store can, the
// limits and the save are one step of the store (LoginStore): the usual
// login then costs one Redis round trip instead of three.
func (a *App) CreateToken(ctx context.Context, authorization, email, workspaceID string) (domain.Token, domain.Session, error) {
	invalid := domain.CheckLogin(email, workspaceID)
	if invalid == nil && authorization != "" && a.logins != nil {
		appKey, _, _ := basicauth.Parse(authorization)
		if st, ok := a.rememberedAccess(ctx, authorization, appKey, workspaceID); ok && st.Active {
			limits := LoginLimits{AppKey: appKey, Own: st.CallerLimit.limit()}
			return a.issueWith(domain.Session{Email: email, WorkspaceID: workspaceID}, func(d domain.Digest, s domain.Session) error {
				return a.logins.SaveLogin(ctx, d, s, limits)
			})
		}
	}
	if _, err := a.admit(ctx, opCreateToken, authorization); err != nil {
		return "", domain.Session{}, err
	}
	if invalid != nil {
		return "", domain.Session{}, invalid
	}
	if _, err := a.grant(ctx, authorization, workspaceID, true); err != nil {
		return "", domain.Session{}, err
	}
	return a.issue(ctx, email, workspaceID)
}

// issue stores a new token of a session for email in workspaceID, from now
// for domain.TokenTTL.
func (a *App) issue(ctx context.Context, email, workspaceID string) (domain.Token, domain.Session, error) {
	return a.issueLaunch(ctx, email, workspaceID, "")
}

// issueLaunch issues a token as issue does, for the session an LTI 1.3
// launch opens, which carries the launch's id (when it has one).
func (a *App) issueLaunch(ctx context.Context, email, workspaceID, launchID string) (domain.Token, domain.Session, error) {
	s := domain.Session{Email: email, WorkspaceID: workspaceID, LTILaunchID: launchID}
	return a.issueWith(s, func(d domain.Digest, s domain.Session) error {
		return a.store.Save(ctx, d, s)
	})
}

// issueWith makes a new token of session s (its user, workspace and
// launch), from now for domain.TokenTTL, and saves it with save.
func (a *App) issueWith(s domain.Session, save func(domain.Digest, domain.Session) error) (domain.Token, domain.Session, error) {
	now := a.now().UTC().Truncate(time.Millisecond)
	s.IssuedAt, s.ExpiresAt = now, now.Add(domain.TokenTTL)
	token := domain.NewToken()
	if err := save(token.Digest(), s); err != nil {
		return "", domain.Session{}, fmt.Errorf("save token: %w", err)
	}
	return token, s, nil
}
