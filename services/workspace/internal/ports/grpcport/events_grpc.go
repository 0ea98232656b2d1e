package grpcport

import (
	"context"

	"github.com/liveproctor/workspaces/pkg/apitime"
	workspacev1 "github.com/liveproctor/workspaces/pkg/gen/workspace/v1"
	"github.com/liveproctor/workspaces/pkg/restrules"
	"github.com/liveproctor/workspaces/services/workspace/internal/app"
	"github.com/liveproctor/workspaces/services/workspace/internal/domain"
	"github.com/liveproctor/workspaces/services/workspace/internal/ports/grpccall"
)

func (s *Server) ListWorkspaceEvents(ctx context.Context, req *workspacev1.ListWorkspaceEventsRequest) (*workspacev1.ListWorkspaceEventsResponse, error) {
	res, err := s.app.ListWorkspaceEvents(ctx, grpccall.Caller(ctx), app.EventsInput{
		WorkspaceID:    req.GetId(),
		IncludeManaged: req.GetIncludeManaged(),
		Types:          req.GetType(),
		PageSize:       req.PageSize,
		PageToken:      req.GetPageToken(),
	})
	if err != nil {
		return nil, grpccall.Error(err)
	}
	out := &workspacev1.ListWorkspaceEventsResponse{
		Events:        make([]*workspacev1.Event, len(res.Events)),
		NextPageToken: res.NextPageToken,
	}
	for i, e := range res.Events {
		out.Events[i] = eventToProto(e)
	}
	return out, nil
}

// RecordSessionRevocation records a revocation the auth service made (only
// the root workspace's key pairs may call it; the app says so).
func (s *Server) RecordSessionRevocation(ctx context.Context, req *workspacev1.RecordSessionRevocationRequest) (*workspacev1.RecordSessionRevocationResponse, error) {
	err := s.app.RecordSessionRevocation(ctx, grpccall.Caller(ctx), app.SessionRevocation{
		WorkspaceID: req.GetWorkspaceId(),
		User:        req.GetUser(),
		ActorAppKey: req.GetActorAppKey(),
	})
	if err != nil {
		return nil, grpccall.Error(err)
	}
	return &workspacev1.RecordSessionRevocationResponse{}, nil
}

// EncodeEvent renders e exactly as GET …/events shows it (the gateway
// renders with restrules.JSON too): a webhook delivery's body.
func EncodeEvent(e domain.Event) ([]byte, error) {
	return restrules.JSON.Marshal(eventToProto(e))
}

func eventToProto(e domain.Event) *workspacev1.Event {
	out := &workspacev1.Event{
		Id:            e.ID,
		Type:          string(e.Type),
		OccurTime:     apitime.Format(e.OccurredAt),
		WorkspaceId:   e.WorkspaceID,
		Actor:         actorToProto(e.Actor),
		Target:        &workspacev1.EventTarget{Type: e.Target.Type, Id: e.Target.ID},
		RequestId:     e.RequestID,
		ChangedFields: e.ChangedFields,
	}
	// Only the types that carry them show a reason or an event id.
	if e.Reason != "" {
		out.Reason = &e.Reason
	}
	if e.EventID != "" {
		out.EventId = &e.EventID
	}
	return out
}

// actorToProto names who made a change: the system, an administrator in
// the portal (the workspace and the link that started the session), or a
// key pair.
func actorToProto(a domain.Actor) *workspacev1.EventActor {
	switch {
	case a.System:
		return &workspacev1.EventActor{Type: "system"}
	case a.PortalLinkID != "":
		return &workspacev1.EventActor{Type: "portal", WorkspaceId: a.WorkspaceID, LinkId: &a.PortalLinkID}
	}
	return &workspacev1.EventActor{Type: "keyPair", WorkspaceId: a.WorkspaceID, AppKey: a.AppKey}
}
