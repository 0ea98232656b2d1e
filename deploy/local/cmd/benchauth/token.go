package main

import (
	"context"
	"errors"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/liveproctor/workspaces/deploy/local/benchlogin"
	"github.com/liveproctor/workspaces/pkg/basicauth"
	authv1 "github.com/liveproctor/workspaces/pkg/gen/auth/v1"
)

// tokenServer issues tokens for the one key pair it knows. Every method
// but CreateSdkToken answers Unimplemented.
type tokenServer struct {
	authv1.UnimplementedAuthServiceServer
	issuer *benchlogin.Issuer
}

var _ authv1.AuthServiceServer = (*tokenServer)(nil)

func (s *tokenServer) CreateSdkToken(ctx context.Context, req *authv1.CreateSdkTokenRequest) (*authv1.CreateSdkTokenResponse, error) {
	if !s.issuer.Authorized(basicauth.FromIncoming(ctx)) {
		return nil, status.Error(codes.Unauthenticated, "unauthenticated")
	}
	if req.GetEmail() == "" || req.GetWorkspaceId() == "" {
		return nil, status.Error(codes.InvalidArgument, "email and workspaceId are required")
	}
	auth, expiresAt, err := s.issuer.Issue(ctx, req.GetEmail(), req.GetWorkspaceId())
	switch {
	case errors.Is(err, benchlogin.ErrStore):
		return nil, status.Error(codes.Unavailable, "unavailable")
	case err != nil:
		return nil, status.Error(codes.Internal, "internal")
	}
	return &authv1.CreateSdkTokenResponse{Auth: auth, ExpiresAt: expiresAt}, nil
}
