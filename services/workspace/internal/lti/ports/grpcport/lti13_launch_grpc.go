package grpcport

import (
	"context"

	workspacev1 "github.com/liveproctor/workspaces/pkg/gen/workspace/v1"
	ltiapp "github.com/liveproctor/workspaces/services/workspace/internal/lti/app"
	"github.com/liveproctor/workspaces/services/workspace/internal/ports/grpccall"
)

// VerifyLti13Launch checks an LTI 1.3 launch for the auth service (only the
// root workspace's key pairs may call it; the use case says so).
func (s *Server) VerifyLti13Launch(ctx context.Context, req *workspacev1.VerifyLti13LaunchRequest) (*workspacev1.Lti13Launch, error) {
	l, err := s.uc.LTI13Launches.Verify(ctx, grpccall.Caller(ctx), req.GetIdToken(), req.GetState(), ltiapp.LTI13BrowserProof{
		State: req.GetBrowserState(), Nonce: req.GetBrowserNonce(), FromStorage: req.GetFromPlatformStorage(),
	})
	if err != nil {
		return nil, err
	}
	out := &workspacev1.Lti13Launch{
		WorkspaceId:                 l.WorkspaceID,
		RegistrationId:              l.RegistrationID,
		DeploymentId:                l.DeploymentID,
		MessageType:                 l.MessageType,
		Email:                       l.Email,
		EmailDerived:                l.EmailDerived,
		Subject:                     l.Subject,
		ResourceLinkId:              l.ResourceLinkID,
		LaunchPresentationReturnUrl: l.ReturnURL,
		LaunchId:                    l.ID,
		CustomParameters:            make([]*workspacev1.LtiParameter, len(l.Custom)),
	}
	for i, p := range l.Custom {
		out.CustomParameters[i] = &workspacev1.LtiParameter{Name: p.Name, Value: p.Value}
	}
	if dl := l.DeepLinking; dl != nil {
		out.DeepLinking = &workspacev1.Lti13DeepLinking{ReturnUrl: dl.ReturnURL, Data: dl.Data, DeepLinkId: dl.ID}
	}
	return out, nil
}

// GetLtiToolKeys answers anyone: platforms fetch the tool's public keys
// anonymously, and the app's policy asks no credentials of it.
func (s *Server) GetLtiToolKeys(ctx context.Context, _ *workspacev1.GetLtiToolKeysRequest) (*workspacev1.LtiToolKeys, error) {
	jwks, err := s.uc.ToolKeys.JWKS(ctx)
	if err != nil {
		return nil, err
	}
	return &workspacev1.LtiToolKeys{Jwks: string(jwks)}, nil
}

// CreateLtiDeepLinkingResponse answers anyone who holds a deep-linking
// request's single-use id: the teacher's browser, through the gateway.
func (s *Server) CreateLtiDeepLinkingResponse(ctx context.Context, req *workspacev1.CreateLtiDeepLinkingResponseRequest) (*workspacev1.LtiDeepLinkingResponse, error) {
	r, err := s.uc.DeepLinking.CreateResponse(ctx, req.GetDeepLinkId(), req.GetExamConfigId(), req.ScoreMaximum)
	if err != nil {
		return nil, err
	}
	return &workspacev1.LtiDeepLinkingResponse{ReturnUrl: r.ReturnURL, Jwt: r.JWT}, nil
}
