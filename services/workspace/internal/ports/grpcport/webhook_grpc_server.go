package grpcport

import (
	"context"

	workspacev1 "github.com/liveproctor/workspaces/pkg/gen/workspace/v1"
)

// The WorkspaceService's webhook methods are the webhook context's (its own
// port, internal/webhook/ports/grpcport): this server hands each call on,
// after the interceptors and the policy every method of the one service
// goes through.

func (s *Server) ListWebhooks(ctx context.Context, req *workspacev1.ListWebhooksRequest) (*workspacev1.ListWebhooksResponse, error) {
	return s.webhooks.ListWebhooks(ctx, req)
}

func (s *Server) CreateWebhook(ctx context.Context, req *workspacev1.CreateWebhookRequest) (*workspacev1.CreateWebhookResponse, error) {
	return s.webhooks.CreateWebhook(ctx, req)
}

func (s *Server) GetWebhook(ctx context.Context, req *workspacev1.GetWebhookRequest) (*workspacev1.Webhook, error) {
	return s.webhooks.GetWebhook(ctx, req)
}

func (s *Server) UpdateWebhook(ctx context.Context, req *workspacev1.UpdateWebhookRequest) (*workspacev1.Webhook, error) {
	return s.webhooks.UpdateWebhook(ctx, req)
}

func (s *Server) DeleteWebhook(ctx context.Context, req *workspacev1.DeleteWebhookRequest) (*workspacev1.Webhook, error) {
	return s.webhooks.DeleteWebhook(ctx, req)
}

func (s *Server) RotateWebhookSecret(ctx context.Context, req *workspacev1.RotateWebhookSecretRequest) (*workspacev1.RotateWebhookSecretResponse, error) {
	return s.webhooks.RotateWebhookSecret(ctx, req)
}

func (s *Server) ListWebhookAttempts(ctx context.Context, req *workspacev1.ListWebhookAttemptsRequest) (*workspacev1.ListWebhookAttemptsResponse, error) {
	return s.webhooks.ListWebhookAttempts(ctx, req)
}

func (s *Server) ResendWebhookEvent(ctx context.Context, req *workspacev1.ResendWebhookEventRequest) (*workspacev1.ResendWebhookEventResponse, error) {
	return s.webhooks.ResendWebhookEvent(ctx, req)
}

func (s *Server) RecoverWebhookEvents(ctx context.Context, req *workspacev1.RecoverWebhookEventsRequest) (*workspacev1.RecoverWebhookEventsResponse, error) {
	return s.webhooks.RecoverWebhookEvents(ctx, req)
}

func (s *Server) TestWebhook(ctx context.Context, req *workspacev1.TestWebhookRequest) (*workspacev1.TestWebhookResponse, error) {
	return s.webhooks.TestWebhook(ctx, req)
}
