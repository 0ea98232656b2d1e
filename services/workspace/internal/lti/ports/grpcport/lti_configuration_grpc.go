package grpcport

import (
	"context"

	workspacev1 "github.com/liveproctor/workspaces/pkg/gen/workspace/v1"
	"github.com/liveproctor/workspaces/services/workspace/internal/ports/grpccall"
)

// GetLtiConfiguration answers anyone: an LMS fetches it anonymously, and the
// app's policy (app.Admit) asks no credentials of it.
func (s *Server) GetLtiConfiguration(ctx context.Context, req *workspacev1.GetLtiConfigurationRequest) (*workspacev1.LtiConfiguration, error) {
	c, err := s.uc.Registrations.Configuration(ctx, req.GetWorkspaceId())
	if err != nil {
		return nil, grpccall.Error(err)
	}
	return &workspacev1.LtiConfiguration{
		WorkspaceId:            c.WorkspaceID,
		Title:                  c.Title,
		Description:            c.Description,
		LaunchUrl:              c.LaunchURL,
		Domain:                 c.Domain,
		Lti13LoginUrl:          c.LTI13LoginURL,
		Lti13LaunchUrl:         c.LTI13LaunchURL,
		Lti13JwksUrl:           c.LTI13JWKSURL,
		Lti11ConfigurationUrl:  c.LTI11ConfigURL,
		CanvasConfigurationUrl: c.CanvasJSONURL,
	}, nil
}
