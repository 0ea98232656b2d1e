package grpcport

import (
	"context"

	"github.com/liveproctor/workspaces/pkg/apitime"
	workspacev1 "github.com/liveproctor/workspaces/pkg/gen/workspace/v1"
	"github.com/liveproctor/workspaces/pkg/grpcmw"
	ltiapp "github.com/liveproctor/workspaces/services/workspace/internal/lti/app"
	"github.com/liveproctor/workspaces/services/workspace/internal/ports/grpccall"
)

func (s *Server) CreateLtiRegistrationLink(ctx context.Context, req *workspacev1.CreateLtiRegistrationLinkRequest) (*workspacev1.LtiRegistrationLink, error) {
	link, err := s.uc.DynamicRegistration.CreateLink(ctx, grpccall.Caller(ctx), req.GetId())
	if err != nil {
		return nil, grpccall.Error(err)
	}
	return &workspacev1.LtiRegistrationLink{Url: link.URL, ExpireTime: apitime.Format(link.ExpiresAt)}, nil
}

// RegisterLtiPlatform answers anyone: the platform sends the
// administrator's browser with the link, and the link is the credential
// (app.Admit asks no other).
func (s *Server) RegisterLtiPlatform(ctx context.Context, req *workspacev1.RegisterLtiPlatformRequest) (*workspacev1.LtiPlatformRegistration, error) {
	r, err := s.uc.DynamicRegistration.Register(ctx, grpcmw.RequestID(ctx), ltiapp.LinkOpening{
		Link: req.GetLink(), ConfigurationURL: req.GetOpenidConfiguration(), Token: req.GetRegistrationToken(),
	})
	if err != nil {
		return nil, grpccall.Error(err)
	}
	return &workspacev1.LtiPlatformRegistration{
		WorkspaceId: r.WorkspaceID, Registration: ltiRegistrationToProto(ltiapp.RegistrationView{Registration: r.Registration}), PlatformName: r.Product,
	}, nil
}
