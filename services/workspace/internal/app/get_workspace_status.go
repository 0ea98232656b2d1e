package app

import (
	"context"

	"github.com/liveproctor/workspaces/services/workspace/internal/domain"
)

// GetWorkspaceStatus returns a workspace the caller may see, deleted or not,
// so the auth service can tell a live workspace from a deleted one and
// refuse tokens issued before its last delete.
func (a *App) GetWorkspaceStatus(ctx context.Context, caller domain.Caller, id string) (*domain.Workspace, error) {
	w, err := a.load(ctx, id)
	if err != nil {
		return nil, err
	}
	if !w.VisibleTo(caller.WorkspaceID) {
		return nil, notFound(id)
	}
	return w, nil
}
