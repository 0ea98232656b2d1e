package app

import (
	"context"

	"github.com/liveproctor/workspaces/services/workspace/internal/domain"
	ltidomain "github.com/liveproctor/workspaces/services/workspace/internal/lti/domain"
)

// AddDeployment lets a deployment of the platform launch through the
// registration, and returns the registration with its launch health (read
// before the write, so that a failed read changes nothing). A deployment
// id the registration holds already changes nothing (no write, no event),
// so a retried call answers the same.
func (r *Registrations) AddDeployment(ctx context.Context, caller domain.Caller, id, registrationID, deploymentID string) (RegistrationView, error) {
	if err := ltidomain.CheckDeploymentID(deploymentID); err != nil {
		return RegistrationView{}, err
	}
	health, err := r.healthOf(ctx, id, registrationID)
	if err != nil {
		return RegistrationView{}, err
	}
	var reg ltidomain.Registration
	err = r.ws.Write(ctx, caller.Actor(), caller.RequestID, nil, func() (*domain.Workspace, error) { return r.ws.Managed(ctx, caller, id) },
		func(w *domain.Workspace) (bool, error) {
			var added bool
			var err error
			reg, added, err = w.AddLTIDeployment(registrationID, deploymentID, r.s.timestamp())
			return added, err
		})
	if err != nil {
		return RegistrationView{}, registrationError(err, registrationID, "")
	}
	return RegistrationView{Registration: reg, Health: health}, nil
}
