package app

import (
	"context"

	"github.com/liveproctor/workspaces/services/workspace/internal/domain"
	webhookdomain "github.com/liveproctor/workspaces/services/workspace/internal/webhook/domain"
)

// List returns the endpoints of a workspace the caller owns or manages,
// oldest first.
func (e *Endpoints) List(ctx context.Context, caller domain.Caller, id string) ([]webhookdomain.Endpoint, error) {
	w, err := e.ws.Managed(ctx, caller, id)
	if err != nil {
		return nil, err
	}
	return w.Webhooks().All(), nil
}

// Get returns one endpoint of a workspace the caller owns or manages.
func (e *Endpoints) Get(ctx context.Context, caller domain.Caller, id, endpointID string) (webhookdomain.Endpoint, error) {
	_, ep, err := e.endpoint(ctx, caller, id, endpointID)
	return ep, err
}
