package grpcport

import (
	"context"
	"strings"

	"google.golang.org/grpc/metadata"

	"github.com/liveproctor/workspaces/pkg/fault"
	"github.com/liveproctor/workspaces/services/auth/internal/domain"
)

var errNoBearer = fault.New(fault.Unauthenticated,
	"missing token: send Authorization: Bearer <auth> with the auth value of POST /api/login/sdk")

// authorization returns the call's Authorization metadata as sent. Basic
// credentials are not checked here: the workspace service, which owns key
// pairs, checks them when the application asks it about the workspace.
func authorization(ctx context.Context) string {
	if v := metadata.ValueFromIncomingContext(ctx, "authorization"); len(v) == 1 {
		return v[0]
	}
	return ""
}

// bearer returns the token of an Authorization: Bearer header.
func bearer(ctx context.Context) (domain.Token, error) {
	scheme, token, ok := strings.Cut(authorization(ctx), " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") || strings.TrimSpace(token) == "" {
		return "", errNoBearer
	}
	return domain.Token(strings.TrimSpace(token)), nil
}
