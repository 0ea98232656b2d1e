package app

import (
	"context"

	"github.com/liveproctor/workspaces/services/workspace/internal/domain"
)

// Get returns one LTI 1.3 registration of a workspace the caller owns or
// manages, with its launch health.
func (r *Registrations) Get(ctx context.Context, caller domain.Caller, id, registrationID string) (RegistrationView, error) {
	w, err := r.ws.Managed(ctx, caller, id)
	if err != nil {
		return RegistrationView{}, err
	}
	reg, ok := w.LTIRegistrations().Get(registrationID)
	if !ok {
		return RegistrationView{}, registrationNotFound(registrationID)
	}
	health, err := r.healthOf(ctx, w.ID(), reg.ID)
	if err != nil {
		return RegistrationView{}, err
	}
	return RegistrationView{Registration: reg, Health: health}, nil
}
