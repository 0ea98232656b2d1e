package app

import (
	"context"

	"github.com/liveproctor/workspaces/services/workspace/internal/domain"
	ltidomain "github.com/liveproctor/workspaces/services/workspace/internal/lti/domain"
)

// DeleteLTIRegistration removes an LTI 1.3 registration from a workspace
// the caller owns or manages and returns it as it was. Its (issuer, client
// id) pair is released after the write, so it may be registered again.
func (a *App) DeleteLTIRegistration(ctx context.Context, caller domain.Caller, id, registrationID string) (ltidomain.Registration, error) {
	var removed ltidomain.Registration
	_, err := a.write(ctx, by(caller), func() (*domain.Workspace, error) { return a.keyManaged(ctx, caller, id) }, Precondition{},
		func(w *domain.Workspace) (bool, error) {
			var err error
			removed, err = w.RemoveLTIRegistration(registrationID, a.timestamp())
			return err == nil, err
		})
	if err != nil {
		return ltidomain.Registration{}, ltiError(err, registrationID, "")
	}
	a.releaseLTIPair(ctx, removed.Issuer, removed.ClientID, removed.ID)
	return removed, nil
}
