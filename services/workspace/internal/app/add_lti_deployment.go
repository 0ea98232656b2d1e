package app

import (
	"context"

	"github.com/liveproctor/workspaces/services/workspace/internal/domain"
	ltidomain "github.com/liveproctor/workspaces/services/workspace/internal/lti/domain"
)

// AddLTIDeployment lets a deployment of the platform launch through the
// registration, and returns the registration. A deployment id the
// registration holds already changes nothing (no write, no event), so a
// retried call answers the same.
func (a *App) AddLTIDeployment(ctx context.Context, caller domain.Caller, id, registrationID, deploymentID string) (ltidomain.Registration, error) {
	if err := ltidomain.CheckDeploymentID(deploymentID); err != nil {
		return ltidomain.Registration{}, err
	}
	var reg ltidomain.Registration
	_, err := a.write(ctx, by(caller), func() (*domain.Workspace, error) { return a.keyManaged(ctx, caller, id) }, Precondition{},
		func(w *domain.Workspace) (bool, error) {
			var added bool
			var err error
			reg, added, err = w.AddLTIDeployment(registrationID, deploymentID, a.timestamp())
			return added, err
		})
	if err != nil {
		return ltidomain.Registration{}, ltiError(err, registrationID, "")
	}
	return reg, nil
}
