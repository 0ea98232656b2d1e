package app

import (
	"context"

	"github.com/liveproctor/workspaces/services/workspace/internal/domain"
)

// DeleteWorkspace soft-deletes a workspace the caller manages: it leaves
// lists and gets and its key pairs stop authenticating. Workspaces it manages
// stay, still managed by the workspaces above it.
func (a *App) DeleteWorkspace(ctx context.Context, caller domain.Caller, id string, cond Precondition) (*domain.Workspace, error) {
	return a.setDeleted(ctx, caller, id, cond, true)
}
