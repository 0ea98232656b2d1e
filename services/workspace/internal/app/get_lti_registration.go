package app

import (
	"context"

	"github.com/liveproctor/workspaces/services/workspace/internal/domain"
	ltidomain "github.com/liveproctor/workspaces/services/workspace/internal/lti/domain"
)

// GetLTIRegistration returns one LTI 1.3 registration of a workspace the
// caller owns or manages.
func (a *App) GetLTIRegistration(ctx context.Context, caller domain.Caller, id, registrationID string) (ltidomain.Registration, error) {
	w, err := a.keyManaged(ctx, caller, id)
	if err != nil {
		return ltidomain.Registration{}, err
	}
	r, ok := w.LTIRegistrations().Get(registrationID)
	if !ok {
		return ltidomain.Registration{}, ltiNotFound(registrationID)
	}
	return r, nil
}
