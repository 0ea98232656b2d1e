package app

import (
	"context"

	"github.com/liveproctor/workspaces/services/workspace/internal/domain"
	ltidomain "github.com/liveproctor/workspaces/services/workspace/internal/lti/domain"
)

// RemoveDeployment stops a deployment of the platform from launching
// through the registration, and returns the registration as it now is.
func (r *Registrations) RemoveDeployment(ctx context.Context, caller domain.Caller, id, registrationID, deploymentID string) (ltidomain.Registration, error) {
	var reg ltidomain.Registration
	err := r.ws.Write(ctx, caller.Actor(), caller.RequestID, nil, func() (*domain.Workspace, error) { return r.ws.Managed(ctx, caller, id) },
		func(w *domain.Workspace) (bool, error) {
			var err error
			reg, err = w.RemoveLTIDeployment(registrationID, deploymentID, r.s.timestamp())
			return err == nil, err
		})
	if err != nil {
		return ltidomain.Registration{}, registrationError(err, registrationID, deploymentID)
	}
	return reg, nil
}
