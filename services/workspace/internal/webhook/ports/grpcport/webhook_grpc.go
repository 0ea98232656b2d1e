package grpcport

import (
	"context"
	"time"

	"github.com/liveproctor/workspaces/pkg/apitime"
	"github.com/liveproctor/workspaces/pkg/fault"
	workspacev1 "github.com/liveproctor/workspaces/pkg/gen/workspace/v1"
	"github.com/liveproctor/workspaces/services/workspace/internal/ports/grpccall"
	webhookdomain "github.com/liveproctor/workspaces/services/workspace/internal/webhook/domain"
)

func (s *Server) ListWebhooks(ctx context.Context, req *workspacev1.ListWebhooksRequest) (*workspacev1.ListWebhooksResponse, error) {
	endpoints, err := s.endpoints.List(ctx, grpccall.Caller(ctx), req.GetId())
	if err != nil {
		return nil, grpccall.Error(err)
	}
	out := &workspacev1.ListWebhooksResponse{Webhooks: make([]*workspacev1.Webhook, len(endpoints))}
	for i, e := range endpoints {
		out.Webhooks[i] = webhookToProto(e)
	}
	return out, nil
}

func (s *Server) CreateWebhook(ctx context.Context, req *workspacev1.CreateWebhookRequest) (*workspacev1.CreateWebhookResponse, error) {
	created, err := s.endpoints.Create(ctx, grpccall.Caller(ctx), req.GetId(), webhookdomain.NewEndpoint{
		URL:         req.GetUrl(),
		EventTypes:  req.GetEventTypes(),
		Description: req.GetDescription(),
	})
	if err != nil {
		return nil, grpccall.Error(err)
	}
	e := webhookToProto(created.Endpoint)
	return &workspacev1.CreateWebhookResponse{
		Id:             e.Id,
		Url:            e.Url,
		EventTypes:     e.EventTypes,
		Description:    e.Description,
		Enabled:        e.Enabled,
		DisabledReason: e.DisabledReason,
		Secret:         created.Secret,
		CreateTime:     e.CreateTime,
		UpdateTime:     e.UpdateTime,
	}, nil
}

func (s *Server) GetWebhook(ctx context.Context, req *workspacev1.GetWebhookRequest) (*workspacev1.Webhook, error) {
	return webhookAnswer(s.endpoints.Get(ctx, grpccall.Caller(ctx), req.GetId(), req.GetWebhookId()))
}

func (s *Server) UpdateWebhook(ctx context.Context, req *workspacev1.UpdateWebhookRequest) (*workspacev1.Webhook, error) {
	c, err := webhookChanges(req)
	if err != nil {
		return nil, grpccall.Error(err)
	}
	return webhookAnswer(s.endpoints.Update(ctx, grpccall.Caller(ctx), req.GetId(), req.GetWebhookId(), c))
}

func (s *Server) DeleteWebhook(ctx context.Context, req *workspacev1.DeleteWebhookRequest) (*workspacev1.Webhook, error) {
	return webhookAnswer(s.endpoints.Delete(ctx, grpccall.Caller(ctx), req.GetId(), req.GetWebhookId()))
}

func (s *Server) RotateWebhookSecret(ctx context.Context, req *workspacev1.RotateWebhookSecretRequest) (*workspacev1.RotateWebhookSecretResponse, error) {
	var overlap *time.Duration
	if d := req.GetOverlap(); d != nil {
		if err := d.CheckValid(); err != nil {
			return nil, grpccall.Error(fault.InvalidField("overlap", "must be a duration such as \"86400s\""))
		}
		v := d.AsDuration()
		overlap = &v
	}
	rotated, err := s.endpoints.RotateSecret(ctx, grpccall.Caller(ctx), req.GetId(), req.GetWebhookId(), overlap)
	if err != nil {
		return nil, grpccall.Error(err)
	}
	return &workspacev1.RotateWebhookSecretResponse{
		Secret:                   rotated.Secret,
		PreviousSecretExpireTime: apitime.Format(rotated.PreviousSecretExpiresAt),
	}, nil
}

func (s *Server) ListWebhookAttempts(ctx context.Context, req *workspacev1.ListWebhookAttemptsRequest) (*workspacev1.ListWebhookAttemptsResponse, error) {
	attempts, next, err := s.endpoints.Attempts(ctx, grpccall.Caller(ctx), req.GetId(), req.GetWebhookId(), req.GetPageToken())
	if err != nil {
		return nil, grpccall.Error(err)
	}
	out := &workspacev1.ListWebhookAttemptsResponse{Attempts: make([]*workspacev1.WebhookAttempt, len(attempts)), NextPageToken: next}
	for i, a := range attempts {
		out.Attempts[i] = &workspacev1.WebhookAttempt{
			EventId:     a.EventID,
			AttemptTime: apitime.Format(a.AttemptedAt),
			Status:      int32(a.Status),
			DurationMs:  int32(min(a.DurationMs, 1<<31-1)),
			Response:    a.Response,
			Error:       a.Error,
		}
	}
	return out, nil
}

func (s *Server) ResendWebhookEvent(ctx context.Context, req *workspacev1.ResendWebhookEventRequest) (*workspacev1.ResendWebhookEventResponse, error) {
	if err := s.endpoints.Resend(ctx, grpccall.Caller(ctx), req.GetId(), req.GetWebhookId(), req.GetEventId()); err != nil {
		return nil, grpccall.Error(err)
	}
	return &workspacev1.ResendWebhookEventResponse{EventId: req.GetEventId()}, nil
}

func (s *Server) RecoverWebhookEvents(ctx context.Context, req *workspacev1.RecoverWebhookEventsRequest) (*workspacev1.RecoverWebhookEventsResponse, error) {
	if err := s.endpoints.Recover(ctx, grpccall.Caller(ctx), req.GetId(), req.GetWebhookId(), req.GetSince()); err != nil {
		return nil, grpccall.Error(err)
	}
	return &workspacev1.RecoverWebhookEventsResponse{Since: req.GetSince()}, nil
}

func (s *Server) TestWebhook(ctx context.Context, req *workspacev1.TestWebhookRequest) (*workspacev1.TestWebhookResponse, error) {
	id, err := s.endpoints.Test(ctx, grpccall.Caller(ctx), req.GetId(), req.GetWebhookId())
	if err != nil {
		return nil, grpccall.Error(err)
	}
	return &workspacev1.TestWebhookResponse{EventId: id}, nil
}

// webhookAnswer is a use case's endpoint, or its error, as the API answers.
func webhookAnswer(e webhookdomain.Endpoint, err error) (*workspacev1.Webhook, error) {
	if err != nil {
		return nil, grpccall.Error(err)
	}
	return webhookToProto(e), nil
}

// webhookToProto is an endpoint as the API shows it: never its secrets.
func webhookToProto(e webhookdomain.Endpoint) *workspacev1.Webhook {
	out := &workspacev1.Webhook{
		Id:             e.ID,
		Url:            e.URL,
		EventTypes:     e.EventTypes,
		Description:    e.Description,
		Enabled:        e.Enabled,
		DisabledReason: e.DisabledReason,
		CreateTime:     apitime.Format(e.CreatedAt),
		UpdateTime:     apitime.Format(e.UpdatedAt),
	}
	if out.EventTypes == nil {
		out.EventTypes = []string{}
	}
	return out
}
