package app

import (
	"context"

	"github.com/liveproctor/workspaces/services/workspace/internal/domain"
	webhookdomain "github.com/liveproctor/workspaces/services/workspace/internal/webhook/domain"
)

// Delete removes an endpoint from a workspace the caller owns or manages
// and returns it as it was; nothing is delivered to it from then on. Its
// delivery state is dropped after the write; its attempts age out.
func (e *Endpoints) Delete(ctx context.Context, caller domain.Caller, id, endpointID string) (webhookdomain.Endpoint, error) {
	var removed webhookdomain.Endpoint
	err := e.ws.Write(ctx, caller.Actor(), caller.RequestID, nil, e.managedRead(ctx, caller, id), func(w *domain.Workspace) (bool, error) {
		var err error
		removed, err = w.RemoveWebhook(endpointID, e.timestamp())
		return err == nil, err
	})
	if err != nil {
		return webhookdomain.Endpoint{}, endpointError(err, endpointID)
	}
	e.forget(ctx, endpointID)
	return removed, nil
}
