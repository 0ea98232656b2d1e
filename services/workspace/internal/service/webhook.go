package service

import (
	"github.com/liveproctor/workspaces/services/workspace/internal/adapters/secretbox"
	"github.com/liveproctor/workspaces/services/workspace/internal/ports/grpcport"
	webhookapp "github.com/liveproctor/workspaces/services/workspace/internal/webhook/app"
)

// newWebhooks builds the webhook context's endpoints over the workspace
// side (workspaces), their secrets sealed by the service's secret box,
// with the delivery state they start, stop and read (deliveries) and the
// audit trail a resend or a recovery names events of (events). A test
// message is rendered as the events feed renders events.
func (s *Service) newWebhooks(workspaces webhookapp.Workspaces, box *secretbox.Box, deliveries webhookapp.Deliveries, events webhookapp.EventSource) *webhookapp.Endpoints {
	return webhookapp.NewEndpoints(workspaces, box, deliveries, events, grpcport.EncodeEvent,
		webhookapp.Settings{Policy: s.cfg.WebhookURLs, Logger: s.logger})
}
