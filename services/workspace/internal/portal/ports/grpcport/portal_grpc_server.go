// Package grpcport is the portal context's gRPC face: it converts between
// the WorkspaceService's portal messages and the portal's use cases, and
// nothing else. The workspace service registers one WorkspaceService,
// whose server hands these methods here.
package grpcport

import (
	"context"

	"github.com/liveproctor/workspaces/pkg/apitime"
	workspacev1 "github.com/liveproctor/workspaces/pkg/gen/workspace/v1"
	portalapp "github.com/liveproctor/workspaces/services/workspace/internal/portal/app"
	portaldomain "github.com/liveproctor/workspaces/services/workspace/internal/portal/domain"
	"github.com/liveproctor/workspaces/services/workspace/internal/ports/grpccall"
)

// Server answers the WorkspaceService's portal methods.
type Server struct {
	portal *portalapp.Portal
}

// NewServer returns the portal methods' server over the portal's use
// cases.
func NewServer(portal *portalapp.Portal) *Server { return &Server{portal: portal} }

func (s *Server) CreatePortalLink(ctx context.Context, req *workspacev1.CreatePortalLinkRequest) (*workspacev1.PortalLink, error) {
	l, err := s.portal.CreateLink(ctx, grpccall.Caller(ctx), req.GetId(), req.GetReturnUrl())
	if err != nil {
		return nil, grpccall.Error(err)
	}
	return &workspacev1.PortalLink{Id: l.ID, Url: l.URL, ExpireTime: apitime.Format(l.ExpiresAt)}, nil
}

func (s *Server) RevokePortalLink(ctx context.Context, req *workspacev1.RevokePortalLinkRequest) (*workspacev1.PortalLinkRevocation, error) {
	l, err := s.portal.RevokeLink(ctx, grpccall.Caller(ctx), req.GetId(), req.GetLinkId())
	if err != nil {
		return nil, grpccall.Error(err)
	}
	return &workspacev1.PortalLinkRevocation{Id: l.ID, Opened: l.Opened(), RevokeTime: apitime.Format(l.RevokedAt)}, nil
}

func (s *Server) OpenPortalLink(ctx context.Context, req *workspacev1.OpenPortalLinkRequest) (*workspacev1.PortalSession, error) {
	opened, err := s.portal.OpenLink(ctx, req.GetSecret(), grpccall.Caller(ctx).RequestID)
	if err != nil {
		return nil, grpccall.Error(err)
	}
	session := sessionToProto(opened.Link)
	session.Token = opened.Token
	return session, nil
}

func (s *Server) GetPortalSession(ctx context.Context, _ *workspacev1.GetPortalSessionRequest) (*workspacev1.PortalSession, error) {
	v, err := s.portal.Session(ctx, grpccall.Caller(ctx))
	if err != nil {
		return nil, grpccall.Error(err)
	}
	session := sessionToProto(v.Link)
	session.WorkspaceName = v.WorkspaceName
	return session, nil
}

// sessionToProto is the session l started, without its token.
func sessionToProto(l portaldomain.Link) *workspacev1.PortalSession {
	return &workspacev1.PortalSession{
		WorkspaceId: l.WorkspaceID,
		LinkId:      l.ID,
		ExpireTime:  apitime.Format(l.SessionEnd()),
		ReturnUrl:   l.ReturnURL,
	}
}
