package grpcport

import (
	"context"
	"strings"

	"google.golang.org/grpc"
	"google.golang.org/grpc/metadata"

	"github.com/liveproctor/workspaces/pkg/basicauth"
	"github.com/liveproctor/workspaces/pkg/fault"
	"github.com/liveproctor/workspaces/pkg/grpcmw"
	"github.com/liveproctor/workspaces/services/workspace/internal/app"
	"github.com/liveproctor/workspaces/services/workspace/internal/domain"
	"github.com/liveproctor/workspaces/services/workspace/internal/ports/grpccall"
)

// Policy admits the calls of the service's operations (app.App.Admit: its
// authentication, failure counts and rate limits).
type Policy interface {
	Admit(ctx context.Context, operation string, creds app.Credentials) (domain.Caller, error)
}

var _ Policy = (*app.App)(nil)

// portalSessionHeader is the metadata a portal session's token travels in:
// not authorization, which grpc-gateway forwards from any REST client, so
// that a session never becomes a REST credential.
const portalSessionHeader = "portal-session"

var errManyPortalSessions = fault.New(fault.Invalid, "send one portal-session, not several")

// AuthInterceptor hands each call's credentials (Basic, or a portal
// session's token) and its method's name, the operation, to the policy, and
// puts the caller it admits in the context. Health checks and reflection
// are the transport's, not operations, and skip it.
func AuthInterceptor(policy Policy) grpc.UnaryServerInterceptor {
	return func(ctx context.Context, req any, info *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (any, error) {
		if grpcmw.Quiet(info.FullMethod) {
			return handler(ctx, req)
		}
		var creds app.Credentials
		if appKey, appSecret, ok := basicauth.FromIncoming(ctx); ok {
			creds = app.Credentials{AppKey: appKey, AppSecret: appSecret}
		}
		switch sessions := metadata.ValueFromIncomingContext(ctx, portalSessionHeader); len(sessions) {
		case 0:
		case 1:
			creds.PortalSession = sessions[0]
		default:
			return nil, errManyPortalSessions
		}
		caller, err := policy.Admit(ctx, operationOf(info.FullMethod), creds)
		if err != nil {
			return nil, err
		}
		return handler(grpccall.WithCaller(ctx, caller), req)
	}
}

// operationOf names the operation of a method: its name without the
// service's ("/pkg.Service/Method" → "Method").
func operationOf(fullMethod string) string {
	return fullMethod[strings.LastIndexByte(fullMethod, '/')+1:]
}
