package app

import (
	"context"

	"github.com/liveproctor/workspaces/services/workspace/internal/domain"
	ltidomain "github.com/liveproctor/workspaces/services/workspace/internal/lti/domain"
)

// RemoveLTIDeployment stops a deployment of the platform from launching
// through the registration, and returns the registration as it now is.
func (a *App) RemoveLTIDeployment(ctx context.Context, caller domain.Caller, id, registrationID, deploymentID string) (ltidomain.Registration, error) {
	var reg ltidomain.Registration
	_, err := a.write(ctx, by(caller), func() (*domain.Workspace, error) { return a.keyManaged(ctx, caller, id) }, Precondition{},
		func(w *domain.Workspace) (bool, error) {
			var err error
			reg, err = w.RemoveLTIDeployment(registrationID, deploymentID, a.timestamp())
			return err == nil, err
		})
	if err != nil {
		return ltidomain.Registration{}, ltiError(err, registrationID, deploymentID)
	}
	return reg, nil
}
