package app

import (
	"context"

	"github.com/liveproctor/workspaces/services/workspace/internal/domain"
)

// UndeleteWorkspace restores a soft-deleted workspace the caller manages; its
// key pairs authenticate again. Undeleting an active workspace returns it
// unchanged.
func (a *App) UndeleteWorkspace(ctx context.Context, caller domain.Caller, id string) (*domain.Workspace, error) {
	return a.setDeleted(ctx, caller, id, Precondition{}, false)
}
