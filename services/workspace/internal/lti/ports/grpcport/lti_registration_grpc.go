package grpcport

import (
	"context"

	"google.golang.org/protobuf/types/known/wrapperspb"

	"github.com/liveproctor/workspaces/pkg/apitime"
	workspacev1 "github.com/liveproctor/workspaces/pkg/gen/workspace/v1"
	ltiapp "github.com/liveproctor/workspaces/services/workspace/internal/lti/app"
	ltidomain "github.com/liveproctor/workspaces/services/workspace/internal/lti/domain"
	"github.com/liveproctor/workspaces/services/workspace/internal/ports/grpccall"
)

func (s *Server) ListLtiRegistrations(ctx context.Context, req *workspacev1.ListLtiRegistrationsRequest) (*workspacev1.ListLtiRegistrationsResponse, error) {
	regs, err := s.uc.Registrations.List(ctx, grpccall.Caller(ctx), req.GetId())
	if err != nil {
		return nil, grpccall.Error(err)
	}
	out := &workspacev1.ListLtiRegistrationsResponse{Registrations: make([]*workspacev1.LtiRegistration, len(regs))}
	for i, r := range regs {
		out.Registrations[i] = ltiRegistrationToProto(r)
	}
	return out, nil
}

func (s *Server) CreateLtiRegistration(ctx context.Context, req *workspacev1.CreateLtiRegistrationRequest) (*workspacev1.LtiRegistration, error) {
	return ltiAnswer(s.uc.Registrations.Create(ctx, grpccall.Caller(ctx), req.GetId(), ltidomain.NewRegistration{
		Issuer:        req.GetIssuer(),
		ClientID:      req.GetClientId(),
		DeploymentIDs: req.GetDeploymentIds(),
		AuthLoginURL:  req.GetAuthLoginUrl(),
		JWKSURL:       req.GetJwksUrl(),
		AuthTokenURL:  req.AuthTokenUrl,
	}))
}

func (s *Server) GetLtiRegistration(ctx context.Context, req *workspacev1.GetLtiRegistrationRequest) (*workspacev1.LtiRegistration, error) {
	return ltiAnswer(s.uc.Registrations.Get(ctx, grpccall.Caller(ctx), req.GetId(), req.GetRegistrationId()))
}

func (s *Server) DeleteLtiRegistration(ctx context.Context, req *workspacev1.DeleteLtiRegistrationRequest) (*workspacev1.LtiRegistration, error) {
	return ltiAnswer(s.uc.Registrations.Delete(ctx, grpccall.Caller(ctx), req.GetId(), req.GetRegistrationId()))
}

func (s *Server) AddLtiDeployment(ctx context.Context, req *workspacev1.AddLtiDeploymentRequest) (*workspacev1.LtiRegistration, error) {
	return ltiAnswer(s.uc.Registrations.AddDeployment(ctx, grpccall.Caller(ctx), req.GetId(), req.GetRegistrationId(), req.GetDeploymentId()))
}

func (s *Server) RemoveLtiDeployment(ctx context.Context, req *workspacev1.RemoveLtiDeploymentRequest) (*workspacev1.LtiRegistration, error) {
	return ltiAnswer(s.uc.Registrations.RemoveDeployment(ctx, grpccall.Caller(ctx), req.GetId(), req.GetRegistrationId(), req.GetDeploymentId()))
}

// ltiAnswer is a use case's registration, or its error, as the API answers.
func ltiAnswer(r ltiapp.RegistrationView, err error) (*workspacev1.LtiRegistration, error) {
	if err != nil {
		return nil, grpccall.Error(err)
	}
	return ltiRegistrationToProto(r), nil
}

func ltiRegistrationToProto(r ltiapp.RegistrationView) *workspacev1.LtiRegistration {
	out := &workspacev1.LtiRegistration{
		Id:             r.ID,
		Issuer:         r.Issuer,
		ClientId:       r.ClientID,
		DeploymentIds:  r.DeploymentIDs,
		AuthLoginUrl:   r.AuthLoginURL,
		JwksUrl:        r.JWKSURL,
		CreateTime:     apitime.Format(r.CreatedAt),
		RecentFailures: make([]*workspacev1.LtiLaunchFailure, len(r.Health.Failures)),
	}
	if out.DeploymentIds == nil {
		out.DeploymentIds = []string{}
	}
	if r.AuthTokenURL != "" {
		out.AuthTokenUrl = wrapperspb.String(r.AuthTokenURL)
	}
	if !r.Health.LastLaunchAt.IsZero() {
		out.LastLaunchTime = wrapperspb.String(apitime.Format(r.Health.LastLaunchAt))
	}
	for i, f := range r.Health.Failures {
		out.RecentFailures[i] = &workspacev1.LtiLaunchFailure{OccurTime: apitime.Format(f.At), Reason: f.Reason, RequestId: f.RequestID}
	}
	return out
}
