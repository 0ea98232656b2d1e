package app

import (
	"context"

	"github.com/liveproctor/workspaces/services/workspace/internal/domain"
)

// GetWorkspace returns an active workspace the caller may see.
func (a *App) GetWorkspace(ctx context.Context, caller domain.Caller, id string) (*domain.Workspace, error) {
	return a.visible(ctx, caller, id)
}
