package app

import (
	"context"

	"github.com/liveproctor/workspaces/services/workspace/internal/domain"
)

// List returns the LTI 1.3 registrations of a workspace the caller owns
// or manages, oldest first, with their launch health.
func (r *Registrations) List(ctx context.Context, caller domain.Caller, id string) ([]RegistrationView, error) {
	w, err := r.ws.Managed(ctx, caller, id)
	if err != nil {
		return nil, err
	}
	return registrationViews(ctx, r.health, w.ID(), w.LTIRegistrations().All())
}
