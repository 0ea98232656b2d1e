// Package grpcport is the auth service's gRPC face: it converts between
// protos and the application, and nothing else. Who may call and how often
// is the application's policy (app/policy.go).
package grpcport

import (
	"context"

	"github.com/liveproctor/workspaces/pkg/apitime"
	authv1 "github.com/liveproctor/workspaces/pkg/gen/auth/v1"
	"github.com/liveproctor/workspaces/services/auth/internal/app"
	"github.com/liveproctor/workspaces/services/auth/internal/domain"
)

// Server implements authv1.AuthServiceServer over the application.
type Server struct {
	authv1.UnimplementedAuthServiceServer
	app *app.App
}

var _ authv1.AuthServiceServer = (*Server)(nil)

// NewServer returns the gRPC server of the application.
func NewServer(a *app.App) *Server { return &Server{app: a} }

func (s *Server) CreateSdkToken(ctx context.Context, req *authv1.CreateSdkTokenRequest) (*authv1.CreateSdkTokenResponse, error) {
	token, session, err := s.app.CreateToken(ctx, authorization(ctx), req.GetEmail(), req.GetWorkspaceId())
	if err != nil {
		return nil, err
	}
	return &authv1.CreateSdkTokenResponse{Auth: string(token), ExpiresAt: apitime.Format(session.ExpiresAt)}, nil
}

func (s *Server) GetSdkSession(ctx context.Context, _ *authv1.GetSdkSessionRequest) (*authv1.SdkSession, error) {
	session, err := s.app.Session(ctx, authorization(ctx))
	if err != nil {
		return nil, err
	}
	return sessionToProto(session), nil
}

func (s *Server) DeleteSdkSession(ctx context.Context, _ *authv1.DeleteSdkSessionRequest) (*authv1.DeleteSdkSessionResponse, error) {
	if err := s.app.EndSession(ctx, authorization(ctx)); err != nil {
		return nil, err
	}
	return &authv1.DeleteSdkSessionResponse{}, nil
}

func (s *Server) RevokeUserSdkTokens(ctx context.Context, req *authv1.RevokeUserSdkTokensRequest) (*authv1.RevokeUserSdkTokensResponse, error) {
	if err := s.app.RevokeUser(ctx, authorization(ctx), req.GetEmail(), req.GetWorkspaceId()); err != nil {
		return nil, err
	}
	return &authv1.RevokeUserSdkTokensResponse{}, nil
}

func (s *Server) IntrospectSdkToken(ctx context.Context, req *authv1.IntrospectSdkTokenRequest) (*authv1.IntrospectSdkTokenResponse, error) {
	session, active, err := s.app.IntrospectToken(ctx, authorization(ctx), domain.Token(req.GetToken()))
	if err != nil || !active {
		return &authv1.IntrospectSdkTokenResponse{}, err
	}
	return &authv1.IntrospectSdkTokenResponse{
		Active: true, Email: session.Email, WorkspaceId: session.WorkspaceID, ExpiresAt: apitime.Format(session.ExpiresAt),
	}, nil
}

func (s *Server) RevokeSdkToken(ctx context.Context, req *authv1.RevokeSdkTokenRequest) (*authv1.RevokeSdkTokenResponse, error) {
	if err := s.app.RevokeToken(ctx, authorization(ctx), domain.Token(req.GetToken())); err != nil {
		return nil, err
	}
	return &authv1.RevokeSdkTokenResponse{}, nil
}

func (s *Server) RevokeWorkspaceSdkTokens(ctx context.Context, req *authv1.RevokeWorkspaceSdkTokensRequest) (*authv1.RevokeWorkspaceSdkTokensResponse, error) {
	if err := s.app.RevokeWorkspace(ctx, authorization(ctx), req.GetWorkspaceId()); err != nil {
		return nil, err
	}
	return &authv1.RevokeWorkspaceSdkTokensResponse{}, nil
}

func (s *Server) ForgetKeyPairAccess(ctx context.Context, req *authv1.ForgetKeyPairAccessRequest) (*authv1.ForgetKeyPairAccessResponse, error) {
	if err := s.app.ForgetKeyPairs(ctx, authorization(ctx), req.GetWorkspaceId(), req.GetAppKeys()); err != nil {
		return nil, err
	}
	return &authv1.ForgetKeyPairAccessResponse{}, nil
}

func (s *Server) CreateLtiSession(ctx context.Context, req *authv1.CreateLtiSessionRequest) (*authv1.LtiSession, error) {
	params := make([]app.LaunchParameter, len(req.GetParameters()))
	for i, p := range req.GetParameters() {
		params[i] = app.LaunchParameter{Name: p.GetName(), Value: p.GetValue()}
	}
	token, session, launch, err := s.app.CreateLTISession(ctx, authorization(ctx), req.GetMethod(), params)
	if err != nil {
		return nil, err
	}
	out := &authv1.LtiSession{
		Auth:                        string(token),
		ExpiresAt:                   apitime.Format(session.ExpiresAt),
		Email:                       session.Email,
		EmailDerived:                launch.EmailDerived,
		WorkspaceId:                 session.WorkspaceID,
		LaunchPresentationReturnUrl: launch.ReturnURL,
		CustomParameters:            make([]*authv1.LtiParameter, len(launch.CustomParameters)),
	}
	for i, p := range launch.CustomParameters {
		out.CustomParameters[i] = &authv1.LtiParameter{Name: p.Name, Value: p.Value}
	}
	return out, nil
}

// CreateLti13Session opens a session from an LTI 1.3 launch, which the
// workspace service verifies.
func (s *Server) CreateLti13Session(ctx context.Context, req *authv1.CreateLti13SessionRequest) (*authv1.LtiSession, error) {
	token, session, launch, err := s.app.CreateLTI13Session(ctx, authorization(ctx), req.GetIdToken(), req.GetState(), app.LTI13BrowserProof{
		State: req.GetBrowserState(), Nonce: req.GetBrowserNonce(), FromStorage: req.GetFromPlatformStorage(),
	})
	if err != nil {
		return nil, err
	}
	out := &authv1.LtiSession{
		Auth:                        string(token),
		ExpiresAt:                   apitime.Format(session.ExpiresAt),
		Email:                       session.Email,
		EmailDerived:                launch.EmailDerived,
		WorkspaceId:                 session.WorkspaceID,
		LaunchPresentationReturnUrl: launch.ReturnURL,
		CustomParameters:            make([]*authv1.LtiParameter, len(launch.CustomParameters)),
		MessageType:                 launch.MessageType,
		DeepLinkReturnUrl:           launch.DeepLinkReturnURL,
		DeepLinkData:                launch.DeepLinkData,
		RegistrationId:              launch.RegistrationID,
		DeploymentId:                launch.DeploymentID,
		DeepLinkId:                  launch.DeepLinkID,
	}
	for i, p := range launch.CustomParameters {
		out.CustomParameters[i] = &authv1.LtiParameter{Name: p.Name, Value: p.Value}
	}
	return out, nil
}

func sessionToProto(s domain.Session) *authv1.SdkSession {
	out := &authv1.SdkSession{Email: s.Email, WorkspaceId: s.WorkspaceID, ExpiresAt: apitime.Format(s.ExpiresAt)}
	if s.LTILaunchID != "" {
		out.Lti = &authv1.SdkSessionLti{LaunchId: s.LTILaunchID}
	}
	return out
}
