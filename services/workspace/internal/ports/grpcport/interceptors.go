package grpcport

import (
	"context"

	"google.golang.org/grpc"

	"github.com/liveproctor/workspaces/pkg/basicauth"
	"github.com/liveproctor/workspaces/pkg/fault"
	"github.com/liveproctor/workspaces/pkg/grpcmw"
	"github.com/liveproctor/workspaces/pkg/ratelimit"
	"github.com/liveproctor/workspaces/services/workspace/internal/domain"
)

// Authenticator checks a key pair.
type Authenticator interface {
	Authenticate(ctx context.Context, appKey, appSecret string) (domain.Caller, error)
}

type callerKey struct{}

// callerFrom returns the caller the auth interceptor put in ctx, with the
// request's id (the events of its changes carry it).
func callerFrom(ctx context.Context) domain.Caller {
	c, _ := ctx.Value(callerKey{}).(domain.Caller)
	c.RequestID = grpcmw.RequestID(ctx)
	return c
}

var (
	errNoCredentials = fault.New(fault.Unauthenticated,
		"missing credentials: send Authorization: Basic base64(appKey:appSecret)")
	errNoAPIAccess = fault.New(fault.PermissionDenied,
		"this key pair may not call the API: it lacks the allow-rest-api-access tag (LTI key pairs are for LTI launches)")
)

// Limits guards calls: the failed authentications of the client's address
// and each key pair's rate (pkg/ratelimit.Guard).
type Limits interface {
	CheckFailures(ctx context.Context, appKey string) error
	Failed(ctx context.Context, appKey string)
	LimitKeyPair(ctx context.Context, appKey string, own ratelimit.Limit) error
}

// unlimited are the methods the other services call to check a caller on
// behalf of a request they count themselves; limiting them again would
// count one request twice (and every session check against the auth
// service's own key pair). VerifyLtiLaunch is one: every school's launches
// would otherwise share the auth service's key pair's limit; the launch's
// own failures are counted against its consumer key and the LMS's address.
// RecordSessionRevocation is one too: the logout it records was counted.
var unlimited = map[string]bool{authenticateMethod: true, statusMethod: true, verifyLaunchMethod: true, recordRevocationMethod: true}

// publicMethods take no credentials: an LMS fetches a workspace's LTI
// configuration anonymously. Credentials sent with them are not looked at,
// so they are neither counted as failures nor rate limited, and the method
// sees no caller. Keep this list short: each entry is a method anyone can
// call.
var publicMethods = map[string]bool{ltiConfigurationMethod: true}

// AuthInterceptor checks the Basic credentials in the call's metadata and
// puts the caller in the context. An address with too many recent failures
// is refused before its credentials are looked at; a failure is counted
// against it. Key pairs without the API access tag are refused everywhere
// except Authenticate, which reports who they belong to. Then the key
// pair's rate limit applies. publicMethods skip all of it.
func AuthInterceptor(auth Authenticator, limits Limits) grpc.UnaryServerInterceptor {
	return func(ctx context.Context, req any, info *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (any, error) {
		if grpcmw.Quiet(info.FullMethod) || publicMethods[info.FullMethod] {
			return handler(ctx, req)
		}
		appKey, appSecret, ok := basicauth.FromIncoming(ctx)
		if !ok {
			return nil, errNoCredentials
		}
		if err := limits.CheckFailures(ctx, appKey); err != nil {
			return nil, err
		}
		caller, err := auth.Authenticate(ctx, appKey, appSecret)
		if fault.KindOf(err) == fault.Unauthenticated {
			limits.Failed(ctx, appKey)
		}
		if err != nil {
			return nil, err
		}
		if !caller.RESTAccess && info.FullMethod != authenticateMethod {
			return nil, errNoAPIAccess
		}
		if !unlimited[info.FullMethod] {
			if err := limits.LimitKeyPair(ctx, appKey, rateLimitOf(caller)); err != nil {
				return nil, err
			}
		}
		return handler(context.WithValue(ctx, callerKey{}, caller), req)
	}
}

// rateLimitOf is the caller's workspace's own limit; Off when it has none.
func rateLimitOf(c domain.Caller) ratelimit.Limit {
	if c.RateLimit == nil {
		return ratelimit.Limit{}
	}
	return ratelimit.Limit{Rate: c.RateLimit.PerSecond, Burst: c.RateLimit.Burst}
}
