package e2e

import (
	"context"
	"testing"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	"github.com/liveproctor/workspaces/pkg/basicauth"
	authv1 "github.com/liveproctor/workspaces/pkg/gen/auth/v1"
)

// Internal systems call the auth service over gRPC with the same key pairs.
func TestInternalCallersIntrospectAndRevokeOverGRPC(t *testing.T) {
	conn, err := grpc.NewClient(env.AuthAddr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	auth := authv1.NewAuthServiceClient(conn)
	withKey := func(key, secret string) context.Context {
		return metadata.AppendToOutgoingContext(context.Background(), "authorization", basicauth.Header(key, secret))
	}
	root := withKey(rootKey, rootSecret)

	d := asRoot(t).create(unique(t, "d"), nil)
	other := asRoot(t).create(unique(t, "other"), nil)
	token := d.server(t).login("ada@example.com", d.WorkspaceID).Auth

	got, err := auth.IntrospectSdkToken(root, &authv1.IntrospectSdkTokenRequest{Token: token})
	if err != nil || !got.GetActive() || got.GetEmail() != "ada@example.com" || got.GetWorkspaceId() != d.WorkspaceID {
		t.Fatalf("introspection by a manager: %v, %v", got, err)
	}
	got, err = auth.IntrospectSdkToken(withKey(other.AppKeys.Server.ConsumerKey, other.AppKeys.Server.SharedSecret),
		&authv1.IntrospectSdkTokenRequest{Token: token})
	if err != nil || got.GetActive() || got.GetEmail() != "" {
		t.Fatalf("introspection by another tenant must say nothing: %v, %v", got, err)
	}
	_, err = auth.IntrospectSdkToken(context.Background(), &authv1.IntrospectSdkTokenRequest{Token: token})
	if status.Code(err) != codes.Unauthenticated {
		t.Fatalf("introspection without credentials: %v", err)
	}

	if _, err := auth.RevokeSdkToken(root, &authv1.RevokeSdkTokenRequest{Token: token}); err != nil {
		t.Fatal(err)
	}
	wantDead(t, token)

	// Session calls carry the token itself.
	second := d.server(t).login("bob@example.com", d.WorkspaceID).Auth
	bearer := metadata.AppendToOutgoingContext(context.Background(), "authorization", "Bearer "+second)
	s, err := auth.GetSdkSession(bearer, &authv1.GetSdkSessionRequest{})
	if err != nil || s.GetEmail() != "bob@example.com" {
		t.Fatalf("GetSdkSession: %v, %v", s, err)
	}
	if _, err := auth.RevokeWorkspaceSdkTokens(root, &authv1.RevokeWorkspaceSdkTokensRequest{WorkspaceId: d.WorkspaceID}); err != nil {
		t.Fatal(err)
	}
	if _, err := auth.GetSdkSession(bearer, &authv1.GetSdkSessionRequest{}); status.Code(err) != codes.Unauthenticated {
		t.Fatalf("a revoked workspace's session: %v", err)
	}
}
