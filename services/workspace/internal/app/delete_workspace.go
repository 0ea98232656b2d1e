package app

import (
	"context"

	"github.com/liveproctor/workspaces/services/workspace/internal/domain"
)

// DeleteWorkspace soft-deletes a workspace the caller manages: it leaves
// lists and gets and its key pairs stop authenticating. Workspaces it manages
// stay, still managed by the workspaces above it.
func (a *App) DeleteWorkspace(ctx context.Context, caller domain.Caller, id string, cond Precondition) (*domain.Workspace, error) {
	read := func() (*domain.Workspace, error) { return a.managedActive(ctx, caller, id) }
	w, err := a.write(ctx, by(caller), read, cond, func(w *domain.Workspace) (bool, error) {
		return true, w.Delete(a.timestamp())
	})
	if err != nil {
		return nil, err
	}
	a.forgetKeys(ctx, w)
	if a.revoker != nil {
		a.revoker.RevokeWorkspaceTokens(w.ID(), caller.RequestID)
	}
	return w, nil
}
