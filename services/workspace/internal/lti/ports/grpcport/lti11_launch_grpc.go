package grpcport

import (
	"context"

	workspacev1 "github.com/liveproctor/workspaces/pkg/gen/workspace/v1"
	ltiapp "github.com/liveproctor/workspaces/services/workspace/internal/lti/app"
	ltidomain "github.com/liveproctor/workspaces/services/workspace/internal/lti/domain"
	"github.com/liveproctor/workspaces/services/workspace/internal/ports/grpccall"
)

// VerifyLtiLaunch checks an LMS's launch for the auth service (only the root
// workspace's key pairs may call it; the use case says so).
func (s *Server) VerifyLtiLaunch(ctx context.Context, req *workspacev1.VerifyLtiLaunchRequest) (*workspacev1.LtiLaunch, error) {
	params := make([]ltidomain.LaunchParam, len(req.GetParameters()))
	for i, p := range req.GetParameters() {
		params[i] = ltidomain.LaunchParam{Name: p.GetName(), Value: p.GetValue()}
	}
	l, err := s.uc.LTI11Launches.Verify(ctx, grpccall.Caller(ctx), ltiapp.LaunchRequest{Method: req.GetMethod(), Params: params})
	if err != nil {
		return nil, err
	}
	out := &workspacev1.LtiLaunch{
		WorkspaceId:                 l.WorkspaceID,
		ConsumerKey:                 l.ConsumerKey,
		Email:                       l.Email,
		EmailDerived:                l.EmailDerived,
		UserId:                      l.UserID,
		ResourceLinkId:              l.ResourceLinkID,
		LaunchPresentationReturnUrl: l.ReturnURL,
		CustomParameters:            make([]*workspacev1.LtiParameter, len(l.Custom)),
	}
	for i, p := range l.Custom {
		out.CustomParameters[i] = &workspacev1.LtiParameter{Name: p.Name, Value: p.Value}
	}
	return out, nil
}
