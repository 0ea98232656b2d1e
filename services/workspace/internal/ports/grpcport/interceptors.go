package grpcport

import (
	"context"
	"log/slog"
	"strings"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	"github.com/liveproctor/workspaces/pkg/basicauth"
	"github.com/liveproctor/workspaces/pkg/fault"
	"github.com/liveproctor/workspaces/pkg/grpcfault"
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

// unauthenticated lists the methods callable without credentials.
func unauthenticated(method string) bool {
	return strings.HasPrefix(method, "/grpc.health.v1.Health/") ||
		strings.HasPrefix(method, "/grpc.reflection.")
}

// AuthInterceptor checks the Basic credentials in the call's metadata and
// puts the caller in the context. Key pairs without the API access tag are
// refused everywhere except Authenticate, which reports who they belong to.
func AuthInterceptor(auth Authenticator) grpc.UnaryServerInterceptor {
	return func(ctx context.Context, req any, info *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (any, error) {
		if unauthenticated(info.FullMethod) {
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

// ErrorInterceptor bounds every call by timeout, turns errors into gRPC
// statuses through the one table in grpcfault, and logs each call with its
// request id. Internal errors are logged in full; callers see a fixed text.
func ErrorInterceptor(logger *slog.Logger, timeout time.Duration) grpc.UnaryServerInterceptor {
	return func(ctx context.Context, req any, info *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (any, error) {
		start := time.Now()
		ctx, cancel := context.WithTimeout(ctx, timeout)
		defer cancel()
		resp, err := handler(ctx, req)
		st := grpcfault.Status(err)
		code := status.Code(st)
		level := slog.LevelInfo
		attrs := []slog.Attr{
			slog.String("method", info.FullMethod),
			slog.String("code", code.String()),
			slog.Duration("duration", time.Since(start)),
			slog.String("request_id", requestID(ctx)),
		}
		switch fault.KindOf(err) {
		case fault.Internal:
			if err != nil {
				level = slog.LevelError
				attrs = append(attrs, slog.String("error", err.Error()))
			}
		case fault.Unavailable:
			level = slog.LevelWarn
			attrs = append(attrs, slog.String("error", err.Error()))
		}
		if !unauthenticated(info.FullMethod) || err != nil {
			logger.LogAttrs(ctx, level, "grpc call", attrs...)
		}
		if err != nil {
			return nil, st
		}
		return resp, nil
	}
}

// requestID is the gateway's X-Request-Id, forwarded as metadata.
func requestID(ctx context.Context) string {
	md, _ := metadata.FromIncomingContext(ctx)
	if v := md.Get("x-request-id"); len(v) == 1 && len(v[0]) <= 128 {
		return v[0]
	}
	return ""
}

// ifMatch returns the If-Match condition: the request's etag field, or the
// if-match metadata the gateway forwards from the HTTP header.
func ifMatch(ctx context.Context, etag string) string {
	if etag != "" {
		return etag
	}
	md, _ := metadata.FromIncomingContext(ctx)
	return strings.Join(md.Get("if-match"), ",")
}
