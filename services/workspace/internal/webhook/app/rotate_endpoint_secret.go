package app

import (
	"context"
	"time"

	"github.com/liveproctor/workspaces/pkg/webhook"
	"github.com/liveproctor/workspaces/services/workspace/internal/domain"
	webhookdomain "github.com/liveproctor/workspaces/services/workspace/internal/webhook/domain"
)

// Rotated is a rotation's answer: the new secret, shown this once, and
// when the one it replaced stops signing.
type Rotated struct {
	Secret                  string
	PreviousSecretExpiresAt time.Time
}

// RotateSecret gives an endpoint of a workspace the caller owns or manages
// a new secret. For overlap (nil: webhookdomain.DefaultSecretOverlap) its
// messages carry the signatures of both, the new one first, so receivers
// can change secrets without refusing one; a second rotation within the
// overlap drops the oldest secret at once.
func (e *Endpoints) RotateSecret(ctx context.Context, caller domain.Caller, id, endpointID string, overlap *time.Duration) (Rotated, error) {
	d := webhookdomain.DefaultSecretOverlap
	if overlap != nil {
		d = *overlap
	}
	if err := webhookdomain.CheckSecretOverlap(d); err != nil {
		return Rotated{}, err
	}
	secret := webhook.NewSecret()
	sealed, err := e.seal(endpointID, secret.Reveal())
	if err != nil {
		return Rotated{}, err
	}
	now := e.timestamp()
	err = e.ws.Write(ctx, caller.Actor(), caller.RequestID, nil, e.managedRead(ctx, caller, id), func(w *domain.Workspace) (bool, error) {
		_, err := w.RotateWebhookSecret(endpointID, sealed, d, now)
		return err == nil, err
	})
	if err != nil {
		return Rotated{}, endpointError(err, endpointID)
	}
	return Rotated{Secret: secret.Reveal(), PreviousSecretExpiresAt: now.Add(d)}, nil
}
