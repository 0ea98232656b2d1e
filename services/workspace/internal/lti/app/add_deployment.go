package app

import (
	"context"

	"github.com/liveproctor/workspaces/services/workspace/internal/domain"
	ltidomain "github.com/liveproctor/workspaces/services/workspace/internal/lti/domain"
)

// AddDeployment lets a deployment of the platform launch through the
// registration, and returns the registration. A deployment id the
// registration holds already changes nothing (no write, no event), so a
// retried call answers the same.
func (r *Registrations) AddDeployment(ctx context.Context, caller domain.Caller, id, registrationID, deploymentID string) (ltidomain.Registration, error) {
	if err := ltidomain.CheckDeploymentID(deploymentID); err != nil {
		return ltidomain.Registration{}, err
	}
	var reg ltidomain.Registration
	err := r.ws.Write(ctx, caller.Actor(), caller.RequestID, nil, func() (*domain.Workspace, error) { return r.ws.Managed(ctx, caller, id) },
		func(w *domain.Workspace) (bool, error) {
			var added bool
			var err error
			reg, added, err = w.AddLTIDeployment(registrationID, deploymentID, r.s.timestamp())
			return added, err
		})
	if err != nil {
		return ltidomain.Registration{}, registrationError(err, registrationID, "")
	}
	return reg, nil
}
