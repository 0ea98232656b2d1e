package app

import (
	"context"
	"time"

	"github.com/liveproctor/workspaces/pkg/ident"
	"github.com/liveproctor/workspaces/pkg/webhook"
	"github.com/liveproctor/workspaces/services/workspace/internal/domain"
	webhookdomain "github.com/liveproctor/workspaces/services/workspace/internal/webhook/domain"
)

// Created is a new endpoint and its secret, which is shown this once.
type Created struct {
	Endpoint webhookdomain.Endpoint
	// Secret is "whsec_" and the base64 of 32 random bytes.
	Secret string
}

// Create adds an endpoint to a workspace the caller owns or manages (the
// rule of its key pairs). Its delivery cursor is started first, from the
// events recorded from now on, so that a stored endpoint never lacks one;
// a cursor whose endpoint a refusal left unstored is dropped.
func (e *Endpoints) Create(ctx context.Context, caller domain.Caller, id string, in webhookdomain.NewEndpoint) (Created, error) {
	if err := domain.CheckNewWebhook(in, e.s.Policy); err != nil {
		return Created{}, err
	}
	current, err := e.ws.Managed(ctx, caller, id)
	if err != nil {
		return Created{}, err
	}
	if err := current.Webhooks().CanAdd(); err != nil {
		return Created{}, err
	}
	endpointID, secret := ident.NewUUID(), webhook.NewSecret()
	sealed, err := e.seal(endpointID, secret.Reveal())
	if err != nil {
		return Created{}, err
	}
	now := e.timestamp()
	if err := e.deliveries.Start(ctx, id, endpointID, domain.EventIDFloor(now)); err != nil {
		return Created{}, err
	}
	var added webhookdomain.Endpoint
	err = e.ws.Write(ctx, caller.Actor(), caller.RequestID, current, e.managedRead(ctx, caller, id), func(w *domain.Workspace) (bool, error) {
		var err error
		added, err = w.AddWebhook(endpointID, in, sealed, e.s.Policy, now)
		return err == nil, err
	})
	if err != nil {
		if refused(err) {
			e.forget(ctx, endpointID)
		}
		return Created{}, err
	}
	return Created{Endpoint: added, Secret: secret.Reveal()}, nil
}

// forget drops the delivery state of an endpoint that is not (or no
// longer) stored. A failure is logged, not answered: delivery drops the
// state of an endpoint it cannot find anyway.
func (e *Endpoints) forget(ctx context.Context, endpointID string) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	if err := e.deliveries.Forget(ctx, endpointID); err != nil {
		e.s.Logger.Warn("a webhook's delivery state was left behind; delivery drops it when it finds the webhook gone",
			"webhook", endpointID, "error", err.Error())
	}
}
