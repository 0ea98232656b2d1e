package app

import (
	"context"

	"github.com/liveproctor/workspaces/services/workspace/internal/domain"
	ltidomain "github.com/liveproctor/workspaces/services/workspace/internal/lti/domain"
)

// Delete removes an LTI 1.3 registration from a workspace the caller owns
// or manages and returns it as it was. Its (issuer, client id) pair is
// released after the write, so it may be registered again.
func (r *Registrations) Delete(ctx context.Context, caller domain.Caller, id, registrationID string) (ltidomain.Registration, error) {
	var removed ltidomain.Registration
	err := r.ws.Write(ctx, caller.Actor(), caller.RequestID, nil, func() (*domain.Workspace, error) { return r.ws.Managed(ctx, caller, id) },
		func(w *domain.Workspace) (bool, error) {
			var err error
			removed, err = w.RemoveLTIRegistration(registrationID, r.s.timestamp())
			return err == nil, err
		})
	if err != nil {
		return ltidomain.Registration{}, registrationError(err, registrationID, "")
	}
	r.release(ctx, removed.Issuer, removed.ClientID, removed.ID)
	return removed, nil
}
