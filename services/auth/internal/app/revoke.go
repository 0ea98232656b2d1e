package app

import (
	"context"
	"strings"

	"github.com/liveproctor/workspaces/pkg/basicauth"

	"github.com/liveproctor/workspaces/services/auth/internal/domain"
)

// RevokeUser revokes every token of a user in a workspace the credentials
// may act for (deleted or not): the logout of every device.
func (a *App) RevokeUser(ctx context.Context, authorization, email, workspaceID string) error {
	if _, err := a.admit(ctx, opRevokeUser, authorization); err != nil {
		return err
	}
	if err := domain.CheckLogin(email, workspaceID); err != nil {
		return err
	}
	if _, err := a.grant(ctx, authorization, workspaceID, false); err != nil {
		return err
	}
	if err := a.store.RevokeUser(ctx, workspaceID, email); err != nil {
		return err
	}
	return a.recordRevocation(ctx, authorization, Revocation{WorkspaceID: workspaceID, User: strings.ToLower(email)})
}

// recordRevocation adds a revocation already made to the audit trail, in
// the workspace service, presenting the service's own key pair. When that
// fails the caller gets the failure (Unavailable) and may retry: the
// revocation is made again, which changes nothing, and recorded again.
func (a *App) recordRevocation(ctx context.Context, authorization string, r Revocation) error {
	r.ActorAppKey, _, _ = basicauth.Parse(authorization)
	return a.workspaces.RecordRevocation(ctx, a.settings.ServiceAuthorization, r)
}

// RevokeWorkspace revokes every token of a workspace the credentials may
// act for. The workspace service calls it when it deletes one.
func (a *App) RevokeWorkspace(ctx context.Context, authorization, workspaceID string) error {
	if _, err := a.admit(ctx, opRevokeWorkspace, authorization); err != nil {
		return err
	}
	if err := domain.CheckWorkspaceID(workspaceID); err != nil {
		return err
	}
	if _, err := a.grant(ctx, authorization, workspaceID, false); err != nil {
		return err
	}
	// The cache bus tells every replica of the delete; this one also
	// marks it, for a workspace service without the bus (no REDIS_ADDR).
	a.WorkspaceChanged(workspaceID, nil)
	if err := a.store.RevokeWorkspace(ctx, workspaceID); err != nil {
		return err
	}
	return a.recordRevocation(ctx, authorization, Revocation{WorkspaceID: workspaceID})
}

// RevokeToken revokes one token of a workspace the credentials may act
// for. An unknown token, or one of another tenant, is not an error.
func (a *App) RevokeToken(ctx context.Context, authorization string, token domain.Token) error {
	if _, err := a.admit(ctx, opRevokeToken, authorization); err != nil {
		return err
	}
	if authorization == "" {
		return errNoCredentials
	}
	if !token.Valid() {
		return nil
	}
	s, err := a.store.Lookup(ctx, token.Digest())
	if isNotFound(err) {
		return nil
	}
	if err != nil {
		return err
	}
	if _, err := a.grant(ctx, authorization, s.WorkspaceID, false); err != nil {
		if isHidden(err) {
			return nil
		}
		return err
	}
	return a.store.Revoke(ctx, token.Digest())
}
