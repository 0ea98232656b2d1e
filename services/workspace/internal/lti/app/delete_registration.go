package app

import (
	"context"

	"github.com/liveproctor/workspaces/services/workspace/internal/domain"
	ltidomain "github.com/liveproctor/workspaces/services/workspace/internal/lti/domain"
)

// Delete removes an LTI 1.3 registration from a workspace the caller owns
// or manages and returns it as it was, with its launch health, read before
// the write so that a failed read changes nothing. Its (issuer, client id)
// pair is released after the write, so it may be registered again, and
// its launch health removed.
func (r *Registrations) Delete(ctx context.Context, caller domain.Caller, id, registrationID string) (RegistrationView, error) {
	health, err := r.healthOf(ctx, id, registrationID)
	if err != nil {
		return RegistrationView{}, err
	}
	var removed ltidomain.Registration
	err = r.ws.Write(ctx, caller.Actor(), caller.RequestID, nil, func() (*domain.Workspace, error) { return r.ws.Managed(ctx, caller, id) },
		func(w *domain.Workspace) (bool, error) {
			var err error
			removed, err = w.RemoveLTIRegistration(registrationID, r.s.timestamp())
			return err == nil, err
		})
	if err != nil {
		return RegistrationView{}, registrationError(err, registrationID, "")
	}
	r.release(ctx, removed.Issuer, removed.ClientID, removed.ID)
	r.forgetHealth(ctx, id, removed.ID)
	return RegistrationView{Registration: removed, Health: health}, nil
}
