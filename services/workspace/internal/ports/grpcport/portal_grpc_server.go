package grpcport

import (
	"context"

	workspacev1 "github.com/liveproctor/workspaces/pkg/gen/workspace/v1"
)

// The WorkspaceService's portal methods are the portal context's (its own
// port, internal/portal/ports/grpcport): this server hands each call on,
// after the interceptors and the policy every method of the one service
// goes through.

func (s *Server) CreatePortalLink(ctx context.Context, req *workspacev1.CreatePortalLinkRequest) (*workspacev1.PortalLink, error) {
	return s.portal.CreatePortalLink(ctx, req)
}

func (s *Server) RevokePortalLink(ctx context.Context, req *workspacev1.RevokePortalLinkRequest) (*workspacev1.PortalLinkRevocation, error) {
	return s.portal.RevokePortalLink(ctx, req)
}

func (s *Server) OpenPortalLink(ctx context.Context, req *workspacev1.OpenPortalLinkRequest) (*workspacev1.PortalSession, error) {
	return s.portal.OpenPortalLink(ctx, req)
}

func (s *Server) GetPortalSession(ctx context.Context, req *workspacev1.GetPortalSessionRequest) (*workspacev1.PortalSession, error) {
	return s.portal.GetPortalSession(ctx, req)
}
