package telemetry

import (
	"net/http"

	"go.opentelemetry.io/contrib/instrumentation/google.golang.org/grpc/otelgrpc"
	"go.opentelemetry.io/contrib/instrumentation/net/http/otelhttp"
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
// traceparent.
func HTTPHandler(h http.Handler, operation string) http.Handler {
	if !TracingEnabled() {
		return h
	}
	return otelhttp.NewHandler(h, operation, otelhttp.WithSpanNameFormatter(func(_ string, r *http.Request) string {
		return r.Method + " " + r.URL.Path
	}))
}
