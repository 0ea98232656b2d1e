package app

import (
	"context"

	"github.com/liveproctor/workspaces/services/workspace/internal/domain"
	ltidomain "github.com/liveproctor/workspaces/services/workspace/internal/lti/domain"
)

// RemoveDeployment stops a deployment of the platform from launching
// through the registration, and returns the registration as it now is,
// with its launch health (read before the write, so that a failed read
// changes nothing).
func (r *Registrations) RemoveDeployment(ctx context.Context, caller domain.Caller, id, registrationID, deploymentID string) (RegistrationView, error) {
	health, err := r.healthOf(ctx, id, registrationID)
	if err != nil {
		return RegistrationView{}, err
	}
	var reg ltidomain.Registration
	err = r.ws.Write(ctx, caller.Actor(), caller.RequestID, nil, func() (*domain.Workspace, error) { return r.ws.Managed(ctx, caller, id) },
		func(w *domain.Workspace) (bool, error) {
			var err error
			reg, err = w.RemoveLTIDeployment(registrationID, deploymentID, r.s.timestamp())
			return err == nil, err
		})
	if err != nil {
		return RegistrationView{}, registrationError(err, registrationID, deploymentID)
	}
	return RegistrationView{Registration: reg, Health: health}, nil
}
