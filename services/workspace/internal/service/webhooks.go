package service

import (
	"fmt"
	"os"

	"github.com/liveproctor/workspaces/pkg/breaker"
	"github.com/liveproctor/workspaces/pkg/outbound"
	"github.com/liveproctor/workspaces/pkg/webhook"
	"github.com/liveproctor/workspaces/services/workspace/internal/adapters/secretbox"
	"github.com/liveproctor/workspaces/services/workspace/internal/ports/grpcport"
	"github.com/liveproctor/workspaces/services/workspace/internal/webhook/adapters/deliverystore"
	webhookapp "github.com/liveproctor/workspaces/services/workspace/internal/webhook/app"
)

// newDeliveries is the webhooks' delivery state, in the workspace store's
// database and through its breaker.
func (s *Service) newDeliveries(storeBreaker *breaker.Breaker) *deliverystore.Store {
	return deliverystore.New(s.mongo.Database(s.cfg.MongoDatabase), deliverystore.WithBreaker(storeBreaker),
		deliverystore.WithAttemptRetention(s.cfg.Webhooks.AttemptRetention))
}

// newWebhooks builds the webhook context's endpoints over the workspace
// side (workspaces), their secrets sealed by the service's secret box,
// with the delivery state they start, stop and read (deliveries) and the
// audit trail a resend or a recovery names events of (events); a test
// message is rendered as the events feed renders events.
func (s *Service) newWebhooks(workspaces webhookapp.Workspaces, box *secretbox.Box, deliveries webhookapp.Deliveries, events webhookapp.EventSource) *webhookapp.Endpoints {
	return webhookapp.NewEndpoints(workspaces, box, deliveries, events, grpcport.EncodeEvent,
		webhookapp.Settings{Policy: s.cfg.WebhookURLs, Logger: s.logger})
}

// newDispatcher builds the webhooks' dispatcher over the delivery state,
// the audit trail (events) and the endpoints' configuration with its
// encoder. Receivers are called under the outbound rule (WEBHOOK_ALLOW_INSECURE_HOSTS),
// each attempt within half the lease, so that it ends while its replica
// still holds the delivery.
func (s *Service) newDispatcher(deliveries *deliverystore.Store, events webhookapp.EventSource, endpoints webhookapp.EndpointSource,
	encode webhookapp.Encoder) *webhookapp.Dispatcher {
	w := s.cfg.Webhooks
	timeout := webhook.Timeout
	if w.Lease > 0 {
		timeout = min(timeout, w.Lease/2)
	}
	sender := webhook.NewSender(outbound.NewClient(s.cfg.WebhookURLs, timeout), webhook.WithTimeout(timeout))
	return webhookapp.NewDispatcher(deliveries, endpoints, events, encode, sender, replicaName(), webhookapp.DispatcherSettings{
		Workers:     w.Workers,
		Lease:       w.Lease,
		IdleRecheck: w.IdleRecheck,
		Retry:       w.RetrySchedule.NextAttempt,
		// Half the shutdown timeout lets attempts in flight finish; the
		// other half is the gRPC calls' (Close).
		StopGrace: s.cfg.ShutdownTimeout / 2,
		Logger:    s.logger,
	})
}

// replicaName names this process in the leases it takes: the host's name
// (the pod's, on Kubernetes) and the process id.
func replicaName() string {
	host, _ := os.Hostname()
	return fmt.Sprintf("%s/%d", host, os.Getpid())
}
