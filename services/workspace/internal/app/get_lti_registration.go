package app

import (
	"context"

	"github.com/liveproctor/workspaces/services/workspace/internal/domain"
)

// GetLTIRegistration returns one LTI 1.3 registration of a workspace the
// caller owns or manages.
func (a *App) GetLTIRegistration(ctx context.Context, caller domain.Caller, id, registrationID string) (domain.LTIRegistration, error) {
	w, err := a.keyManaged(ctx, caller, id)
	if err != nil {
		return domain.LTIRegistration{}, err
	}
	r, ok := w.LTIRegistration(registrationID)
	if !ok {
		return domain.LTIRegistration{}, ltiNotFound(registrationID)
	}
	return r, nil
}
