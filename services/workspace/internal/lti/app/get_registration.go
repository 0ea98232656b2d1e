package app

import (
	"context"

	"github.com/liveproctor/workspaces/services/workspace/internal/domain"
	ltidomain "github.com/liveproctor/workspaces/services/workspace/internal/lti/domain"
)

// Get returns one LTI 1.3 registration of a workspace the caller owns or
// manages.
func (r *Registrations) Get(ctx context.Context, caller domain.Caller, id, registrationID string) (ltidomain.Registration, error) {
	w, err := r.ws.Managed(ctx, caller, id)
	if err != nil {
		return ltidomain.Registration{}, err
	}
	reg, ok := w.LTIRegistrations().Get(registrationID)
	if !ok {
		return ltidomain.Registration{}, registrationNotFound(registrationID)
	}
	return reg, nil
}
