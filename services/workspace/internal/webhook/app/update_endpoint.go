package app

import (
	"context"

	"github.com/liveproctor/workspaces/services/workspace/internal/domain"
	webhookdomain "github.com/liveproctor/workspaces/services/workspace/internal/webhook/domain"
)

// Update changes an endpoint of a workspace the caller owns or manages and
// returns it as it now is; asking for what it is already changes nothing
// and records nothing. Turning it back on delivers the events recorded
// from then on (a recovery delivers those before).
func (e *Endpoints) Update(ctx context.Context, caller domain.Caller, id, endpointID string, c webhookdomain.Changes) (webhookdomain.Endpoint, error) {
	if err := domain.CheckWebhookChanges(c, e.s.Policy); err != nil {
		return webhookdomain.Endpoint{}, err
	}
	var updated webhookdomain.Endpoint
	err := e.ws.Write(ctx, caller.Actor(), caller.RequestID, nil, e.managedRead(ctx, caller, id), func(w *domain.Workspace) (bool, error) {
		var (
			changed bool
			err     error
		)
		updated, changed, err = w.UpdateWebhook(endpointID, c, e.s.Policy, e.timestamp())
		return changed, err
	})
	if err != nil {
		return webhookdomain.Endpoint{}, endpointError(err, endpointID)
	}
	return updated, nil
}
