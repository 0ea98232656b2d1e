package app

import (
	"context"

	"github.com/liveproctor/workspaces/services/workspace/internal/domain"
)

// UndeleteWorkspace restores a soft-deleted workspace the caller manages; its
// key pairs authenticate again. Undeleting an active workspace returns it
// unchanged.
func (a *App) UndeleteWorkspace(ctx context.Context, caller domain.Caller, id string) (*domain.Workspace, error) {
	read := func() (*domain.Workspace, error) { return a.managed(ctx, caller, id) }
	restored := false
	w, err := a.write(ctx, by(caller), read, Precondition{}, func(w *domain.Workspace) (bool, error) {
		restored = w.Undelete(a.timestamp())
		return restored, nil
	})
	if err != nil {
		return nil, err
	}
	if restored {
		a.forgetKeys(ctx, w)
	}
	return w, nil
}
