// Package grpcmw holds the gRPC plumbing the services and the gateway share:
// server middleware, health probing and transport settings.
package grpcmw

import (
	"context"
	"log/slog"
	"strings"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	"github.com/liveproctor/workspaces/pkg/fault"
	"github.com/liveproctor/workspaces/pkg/grpcfault"
)

// Quiet reports whether a method is infrastructure (health checks,
// reflection): callable without credentials and not logged when it succeeds.
func Quiet(method string) bool {
	return strings.HasPrefix(method, "/grpc.health.v1.Health/") ||
		strings.HasPrefix(method, "/grpc.reflection.")
}

// ErrorInterceptor bounds every call by timeout, turns errors into gRPC
// statuses through the one table in grpcfault, and logs each call with its
// request id: failures at info level or above, successes at debug (the
// gateway's access log already has a line for each request). Internal
// errors are logged in full; callers see a fixed text.
// It goes first in the chain, so it also sees the errors of the
// interceptors after it.
func ErrorInterceptor(logger *slog.Logger, timeout time.Duration) grpc.UnaryServerInterceptor {
	return func(ctx context.Context, req any, info *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (any, error) {
		start := time.Now()
		ctx, cancel := context.WithTimeout(ctx, timeout)
		defer cancel()
		resp, err := handler(ctx, req)
		if err == nil {
			if !Quiet(info.FullMethod) && logger.Enabled(ctx, slog.LevelDebug) {
				logCall(ctx, logger, slog.LevelDebug, info.FullMethod, codes.OK, start)
			}
			return resp, nil
		}
		st := grpcfault.Status(err)
		refuseRetries(ctx, err)
		level := slog.LevelInfo
		switch fault.KindOf(err) {
		case fault.Internal:
			level = slog.LevelError
		case fault.Unavailable:
			level = slog.LevelWarn
		}
		if logger.Enabled(ctx, level) {
			var detail []slog.Attr
			if level > slog.LevelInfo {
				detail = append(detail, slog.String("error", err.Error()))
			}
			logCall(ctx, logger, level, info.FullMethod, status.Code(st), start, detail...)
		}
		return nil, st
	}
}

// logCall writes the one line a call gets.
func logCall(ctx context.Context, logger *slog.Logger, level slog.Level, method string, code codes.Code, start time.Time, extra ...slog.Attr) {
	attrs := append([]slog.Attr{
		slog.String("method", method),
		slog.String("code", code.String()),
		slog.Duration("duration", time.Since(start)),
		slog.String("request_id", RequestID(ctx)),
	}, extra...)
	logger.LogAttrs(ctx, level, "grpc call", attrs...)
}

// RequestID is the gateway's X-Request-Id, forwarded as x-request-id
// metadata; empty when absent or implausibly long.
func RequestID(ctx context.Context) string {
	if v := metadata.ValueFromIncomingContext(ctx, "x-request-id"); len(v) == 1 && len(v[0]) <= 128 {
		return v[0]
	}
	return ""
}

// OutgoingRequestID copies the incoming request id onto an outgoing call,
// so one id follows a request through every service.
func OutgoingRequestID(ctx context.Context) context.Context {
	if id := RequestID(ctx); id != "" {
		return metadata.AppendToOutgoingContext(ctx, "x-request-id", id)
	}
	return ctx
}
