package telemetry

import (
	"context"
	"net/http"
	"strings"

	"go.opentelemetry.io/contrib/instrumentation/google.golang.org/grpc/otelgrpc"
	"go.opentelemetry.io/contrib/instrumentation/net/http/otelhttp"
	"go.opentelemetry.io/otel/trace"
	"google.golang.org/grpc"
)

// The instrumentation below is installed only when traces are exported:
// with tracing off it would still cost every request its (no-op) spans.

// GRPCServerOptions traces the calls a server serves.
func GRPCServerOptions() []grpc.ServerOption {
	if !TracingEnabled() {
		return nil
	}
	return []grpc.ServerOption{grpc.StatsHandler(otelgrpc.NewServerHandler())}
}

// GRPCDialOptions traces the calls a client makes and passes the trace on.
func GRPCDialOptions() []grpc.DialOption {
	if !TracingEnabled() {
		return nil
	}
	return []grpc.DialOption{grpc.WithStatsHandler(otelgrpc.NewClientHandler())}
}

// HTTPHandler traces the requests h serves, continuing a caller's
// traceparent. A span is named by the method alone (a non-standard one as
// "other") until NameHTTPSpan names its route: a raw path would make a
// name per workspace id and quote whatever a caller sent. Requests whose
// path starts with one of secretPaths are not traced at all: their URL
// holds a credential, which a span's url attributes would export.
func HTTPHandler(h http.Handler, operation string, secretPaths ...string) http.Handler {
	if !TracingEnabled() {
		return h
	}
	return otelhttp.NewHandler(h, operation,
		otelhttp.WithSpanNameFormatter(func(_ string, r *http.Request) string { return methodLabel(r.Method) }),
		otelhttp.WithFilter(func(r *http.Request) bool {
			for _, p := range secretPaths {
				if strings.HasPrefix(r.URL.Path, p) {
					return false
				}
			}
			return true
		}))
}

// NameHTTPSpan names the request's span, if any, by its method and the
// route pattern it matched; without tracing it does nothing, not even build
// the name.
func NameHTTPSpan(ctx context.Context, method, route string) {
	if !TracingEnabled() {
		return
	}
	trace.SpanFromContext(ctx).SetName(methodLabel(method) + " " + route)
}
