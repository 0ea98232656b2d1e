package app

import (
	"context"
	"fmt"

	"github.com/liveproctor/workspaces/services/workspace/internal/domain"
)

// Test delivers a test message to an enabled endpoint of a workspace the
// caller owns or manages: an event of type webhook.test, made for this
// delivery with a fresh id and recorded nowhere, rendered as the events
// feed renders events; it answers the message's id (its webhook-id).
func (e *Endpoints) Test(ctx context.Context, caller domain.Caller, id, endpointID string) (string, error) {
	if _, err := e.enabled(ctx, caller, id, endpointID); err != nil {
		return "", err
	}
	now := e.timestamp()
	msg := domain.Event{
		ID:          e.ids.Next(now),
		Type:        domain.EventWebhookTest,
		OccurredAt:  now,
		WorkspaceID: id,
		Actor:       caller.Actor(),
		Target:      domain.Target{Type: domain.TargetWebhook, ID: endpointID},
		RequestID:   caller.RequestID,
	}
	body, err := e.encode(msg)
	if err != nil {
		return "", fmt.Errorf("encode the test message: %w", err)
	}
	if err := e.deliveries.Test(ctx, id, endpointID, msg.ID, body); err != nil {
		return "", err
	}
	return msg.ID, nil
}
