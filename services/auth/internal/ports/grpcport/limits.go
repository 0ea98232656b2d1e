package grpcport

import (
	"context"

	"google.golang.org/grpc"

	"github.com/liveproctor/workspaces/pkg/basicauth"
	"github.com/liveproctor/workspaces/pkg/fault"
	authv1 "github.com/liveproctor/workspaces/pkg/gen/auth/v1"
	"github.com/liveproctor/workspaces/pkg/grpcmw"
)

// Limits guards calls: the failed authentications of the client's address,
// and the rate of each SDK token (pkg/ratelimit.Guard). Key pairs' rates
// are counted by the application once their credentials are checked.
type Limits interface {
	CheckFailures(ctx context.Context, appKey string) error
	Failed(ctx context.Context, appKey string)
	LimitToken(ctx context.Context, token string) error
}

// bearerMethods take the SDK token instead of a key pair.
var bearerMethods = map[string]bool{
	authv1.AuthService_GetSdkSession_FullMethodName:    true,
	authv1.AuthService_DeleteSdkSession_FullMethodName: true,
}

// checksOwnFailures are the methods whose application checks the client's
// failed authentications itself, first thing: a login does it in the same
// Redis round trip as the save of its token (app.CreateToken).
var checksOwnFailures = map[string]bool{
	authv1.AuthService_CreateSdkToken_FullMethodName: true,
}

// LimitInterceptor refuses a client address with too many recent failed
// authentications before any credential check. On the token routes it
// counts a token that is not live as a failure of that address, and
// limits each token's rate; a guessed token only spends its own quota.
// Failed key pairs are counted by the workspace service, which checks them.
func LimitInterceptor(limits Limits) grpc.UnaryServerInterceptor {
	return func(ctx context.Context, req any, info *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (any, error) {
		if grpcmw.Quiet(info.FullMethod) {
			return handler(ctx, req)
		}
		if !bearerMethods[info.FullMethod] {
			if checksOwnFailures[info.FullMethod] {
				return handler(ctx, req)
			}
			appKey, _, _ := basicauth.FromIncoming(ctx)
			if err := limits.CheckFailures(ctx, appKey); err != nil {
				return nil, err
			}
			return handler(ctx, req)
		}
		if err := limits.CheckFailures(ctx, ""); err != nil {
			return nil, err
		}
		token, err := bearer(ctx)
		if err != nil {
			return nil, err
		}
		if err := limits.LimitToken(ctx, string(token)); err != nil {
			return nil, err
		}
		resp, err := handler(ctx, req)
		if fault.KindOf(err) == fault.Unauthenticated {
			limits.Failed(ctx, "")
		}
		return resp, err
	}
}
