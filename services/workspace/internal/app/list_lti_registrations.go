package app

import (
	"context"

	"github.com/liveproctor/workspaces/services/workspace/internal/domain"
)

// ListLTIRegistrations returns the LTI 1.3 registrations of a workspace
// the caller owns or manages, oldest first.
func (a *App) ListLTIRegistrations(ctx context.Context, caller domain.Caller, id string) ([]domain.LTIRegistration, error) {
	w, err := a.keyManaged(ctx, caller, id)
	if err != nil {
		return nil, err
	}
	return w.LTIRegistrations(), nil
}
