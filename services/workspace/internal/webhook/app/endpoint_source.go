package app

import (
	"context"
	"errors"
	"fmt"

	"github.com/liveproctor/workspaces/services/workspace/internal/domain"
	webhookdomain "github.com/liveproctor/workspaces/services/workspace/internal/webhook/domain"
)

// What the dispatcher needs of the endpoints (EndpointSource): an
// endpoint read fresh for each attempt, and the writes of what delivery
// decided, attributed to the service itself.

// Target returns what delivering to the endpoint needs, its secrets
// opened; ErrEndpointGone when it, or its workspace, is gone. A deleted
// workspace's endpoints are paused, not gone: its cursors stay where they
// are, and an undelete resumes them with the events recorded meanwhile
// (the delete's among them).
func (e *Endpoints) Target(ctx context.Context, workspaceID, endpointID string) (Target, error) {
	w, err := e.ws.Get(ctx, workspaceID)
	if errors.Is(err, domain.ErrNotFound) {
		return Target{}, ErrEndpointGone
	}
	if err != nil {
		return Target{}, fmt.Errorf("get the webhook's workspace: %w", err)
	}
	ep, ok := w.Webhooks().Get(endpointID)
	if !ok {
		return Target{}, ErrEndpointGone
	}
	t := Target{
		WorkspaceID: workspaceID,
		EndpointID:  endpointID,
		URL:         ep.URL,
		EventTypes:  ep.EventTypes,
		Enabled:     ep.Enabled && !w.Deleted(),
		From:        domain.EventIDFloor(ep.EnabledAt),
	}
	for _, sealed := range ep.SealedSecrets(e.s.Now()) {
		secret, err := e.secrets.Open(secretLabel(endpointID), sealed)
		if err != nil {
			return Target{}, fmt.Errorf("open the secret of webhook %s: %w", endpointID, err)
		}
		t.Secrets = append(t.Secrets, secret)
	}
	return t, nil
}

// Disable turns the endpoint off with the reason, recording
// webhook.disabled; a no-op when it is off already or gone.
func (e *Endpoints) Disable(ctx context.Context, workspaceID, endpointID, reason string) error {
	err := e.systemWrite(ctx, workspaceID, func(w *domain.Workspace) (bool, error) {
		return w.DisableWebhook(endpointID, reason, e.timestamp())
	})
	if errors.Is(err, ErrEndpointGone) {
		return nil
	}
	return err
}

// AttemptsExhausted records webhook.attemptsExhausted: the endpoint never
// took the event eventID, and delivery moved past it. ErrEndpointGone when
// the endpoint or its workspace is gone or deleted.
func (e *Endpoints) AttemptsExhausted(ctx context.Context, workspaceID, endpointID, eventID string) error {
	return e.systemWrite(ctx, workspaceID, func(w *domain.Workspace) (bool, error) {
		return true, w.RecordWebhookAttemptsExhausted(endpointID, eventID, e.timestamp())
	})
}

// systemWrite changes workspace workspaceID as the service itself, deleted
// or not (apply refuses a deleted one); a workspace or endpoint that is
// gone is ErrEndpointGone.
func (e *Endpoints) systemWrite(ctx context.Context, workspaceID string, apply func(*domain.Workspace) (bool, error)) error {
	err := e.ws.Write(ctx, domain.SystemActor, "", nil, func() (*domain.Workspace, error) { return e.ws.Get(ctx, workspaceID) }, apply)
	switch {
	case errors.Is(err, domain.ErrNotFound), errors.Is(err, domain.ErrDeleted), errors.Is(err, webhookdomain.ErrEndpointNotFound):
		return ErrEndpointGone
	case err != nil:
		return fmt.Errorf("record a webhook's delivery: %w", err)
	}
	return nil
}
