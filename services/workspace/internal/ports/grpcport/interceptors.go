package grpcport

import (
	"context"

	"google.golang.org/grpc"

	"github.com/liveproctor/workspaces/pkg/basicauth"
	"github.com/liveproctor/workspaces/pkg/fault"
	"github.com/liveproctor/workspaces/pkg/grpcmw"
	"github.com/liveproctor/workspaces/services/workspace/internal/domain"
)

// Authenticator checks a key pair.
type Authenticator interface {
	Authenticate(ctx context.Context, appKey, appSecret string) (domain.Caller, error)
}

type callerKey struct{}

// callerFrom returns the caller the auth interceptor put in ctx.
func callerFrom(ctx context.Context) domain.Caller {
	c, _ := ctx.Value(callerKey{}).(domain.Caller)
	return c
}

var (
	errNoCredentials = fault.New(fault.Unauthenticated,
		"missing credentials: send Authorization: Basic base64(appKey:appSecret)")
	errNoAPIAccess = fault.New(fault.PermissionDenied,
		"this key pair may not call the API: it lacks the allow-rest-api-access tag (LTI key pairs are for LTI launches)")
)

// AuthInterceptor checks the Basic credentials in the call's metadata and
// puts the caller in the context. Key pairs without the API access tag are
// refused everywhere except Authenticate, which reports who they belong to.
func AuthInterceptor(auth Authenticator) grpc.UnaryServerInterceptor {
	return func(ctx context.Context, req any, info *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (any, error) {
		if grpcmw.Quiet(info.FullMethod) {
			return handler(ctx, req)
		}
		appKey, appSecret, ok := basicauth.FromIncoming(ctx)
		if !ok {
			return nil, errNoCredentials
		}
		caller, err := auth.Authenticate(ctx, appKey, appSecret)
		if err != nil {
			return nil, err
		}
		if !caller.RESTAccess && info.FullMethod != authenticateMethod {
			return nil, errNoAPIAccess
		}
		return handler(context.WithValue(ctx, callerKey{}, caller), req)
	}
}
