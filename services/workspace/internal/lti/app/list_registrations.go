package app

import (
	"context"

	"github.com/liveproctor/workspaces/services/workspace/internal/domain"
	ltidomain "github.com/liveproctor/workspaces/services/workspace/internal/lti/domain"
)

// List returns the LTI 1.3 registrations of a workspace the caller owns
// or manages, oldest first.
func (r *Registrations) List(ctx context.Context, caller domain.Caller, id string) ([]ltidomain.Registration, error) {
	w, err := r.ws.Managed(ctx, caller, id)
	if err != nil {
		return nil, err
	}
	return w.LTIRegistrations().All(), nil
}
