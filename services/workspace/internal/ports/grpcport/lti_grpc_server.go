package grpcport

import (
	"context"

	workspacev1 "github.com/liveproctor/workspaces/pkg/gen/workspace/v1"
)

// The WorkspaceService's LTI methods are the LTI context's (its own port,
// internal/lti/ports/grpcport): this server hands each call on, after the
// interceptors and the policy every method of the one service goes through.

func (s *Server) VerifyLtiLaunch(ctx context.Context, req *workspacev1.VerifyLtiLaunchRequest) (*workspacev1.LtiLaunch, error) {
	return s.lti.VerifyLtiLaunch(ctx, req)
}

func (s *Server) VerifyLti13Launch(ctx context.Context, req *workspacev1.VerifyLti13LaunchRequest) (*workspacev1.Lti13Launch, error) {
	return s.lti.VerifyLti13Launch(ctx, req)
}

func (s *Server) GetLtiToolKeys(ctx context.Context, req *workspacev1.GetLtiToolKeysRequest) (*workspacev1.LtiToolKeys, error) {
	return s.lti.GetLtiToolKeys(ctx, req)
}

func (s *Server) CreateLtiDeepLinkingResponse(ctx context.Context, req *workspacev1.CreateLtiDeepLinkingResponseRequest) (*workspacev1.LtiDeepLinkingResponse, error) {
	return s.lti.CreateLtiDeepLinkingResponse(ctx, req)
}

func (s *Server) StartLti13Login(ctx context.Context, req *workspacev1.StartLti13LoginRequest) (*workspacev1.Lti13LoginRedirect, error) {
	return s.lti.StartLti13Login(ctx, req)
}

func (s *Server) GetLtiConfiguration(ctx context.Context, req *workspacev1.GetLtiConfigurationRequest) (*workspacev1.LtiConfiguration, error) {
	return s.lti.GetLtiConfiguration(ctx, req)
}

func (s *Server) CreateLtiRegistrationLink(ctx context.Context, req *workspacev1.CreateLtiRegistrationLinkRequest) (*workspacev1.LtiRegistrationLink, error) {
	return s.lti.CreateLtiRegistrationLink(ctx, req)
}

func (s *Server) RegisterLtiPlatform(ctx context.Context, req *workspacev1.RegisterLtiPlatformRequest) (*workspacev1.LtiPlatformRegistration, error) {
	return s.lti.RegisterLtiPlatform(ctx, req)
}

func (s *Server) ListLtiRegistrations(ctx context.Context, req *workspacev1.ListLtiRegistrationsRequest) (*workspacev1.ListLtiRegistrationsResponse, error) {
	return s.lti.ListLtiRegistrations(ctx, req)
}

func (s *Server) CreateLtiRegistration(ctx context.Context, req *workspacev1.CreateLtiRegistrationRequest) (*workspacev1.LtiRegistration, error) {
	return s.lti.CreateLtiRegistration(ctx, req)
}

func (s *Server) GetLtiRegistration(ctx context.Context, req *workspacev1.GetLtiRegistrationRequest) (*workspacev1.LtiRegistration, error) {
	return s.lti.GetLtiRegistration(ctx, req)
}

func (s *Server) GetLtiLaunch(ctx context.Context, req *workspacev1.GetLtiLaunchRequest) (*workspacev1.LtiLaunchRecord, error) {
	return s.lti.GetLtiLaunch(ctx, req)
}

func (s *Server) ListLtiLaunchMembers(ctx context.Context, req *workspacev1.ListLtiLaunchMembersRequest) (*workspacev1.ListLtiLaunchMembersResponse, error) {
	return s.lti.ListLtiLaunchMembers(ctx, req)
}

func (s *Server) SubmitLtiScore(ctx context.Context, req *workspacev1.SubmitLtiScoreRequest) (*workspacev1.LtiScoreReceipt, error) {
	return s.lti.SubmitLtiScore(ctx, req)
}

func (s *Server) GetLtiScore(ctx context.Context, req *workspacev1.GetLtiScoreRequest) (*workspacev1.LtiScore, error) {
	return s.lti.GetLtiScore(ctx, req)
}

func (s *Server) DeleteLtiRegistration(ctx context.Context, req *workspacev1.DeleteLtiRegistrationRequest) (*workspacev1.LtiRegistration, error) {
	return s.lti.DeleteLtiRegistration(ctx, req)
}

func (s *Server) AddLtiDeployment(ctx context.Context, req *workspacev1.AddLtiDeploymentRequest) (*workspacev1.LtiRegistration, error) {
	return s.lti.AddLtiDeployment(ctx, req)
}

func (s *Server) RemoveLtiDeployment(ctx context.Context, req *workspacev1.RemoveLtiDeploymentRequest) (*workspacev1.LtiRegistration, error) {
	return s.lti.RemoveLtiDeployment(ctx, req)
}
