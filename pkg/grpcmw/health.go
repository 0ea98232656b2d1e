package grpcmw

import (
	"context"
	"log/slog"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"

	"github.com/liveproctor/workspaces/pkg/breaker"
)

// ProbeHealth keeps hs in step with a store guarded by b: it runs b's
// probes with check (breaker.Run) and reports SERVING or NOT_SERVING for the
// overall status ("") and for each of services whenever the breaker closes
// or opens, so readiness probes and the gateway see an outage as soon as
// calls start failing fast. It returns when ctx ends.
func ProbeHealth(ctx context.Context, hs *health.Server, services []string, b *breaker.Breaker,
	check func(context.Context) error, logger *slog.Logger, what string) {
	b.Run(ctx, check, func(open bool, cause error) {
		st := healthpb.HealthCheckResponse_SERVING
		if open {
			st = healthpb.HealthCheckResponse_NOT_SERVING
			logger.Warn(what+" unreachable: calls fail at once until it answers", "error", cause.Error())
		} else {
			logger.Info(what + " reachable")
		}
		hs.SetServingStatus("", st)
		for _, name := range services {
			hs.SetServingStatus(name, st)
		}
	})
}

// StopGracefully reports NOT_SERVING for everything, lets in-flight calls
// finish for at most timeout, then stops the server.
func StopGracefully(srv *grpc.Server, hs *health.Server, timeout time.Duration) {
	hs.Shutdown()
	stopped := make(chan struct{})
	go func() { srv.GracefulStop(); close(stopped) }()
	select {
	case <-stopped:
	case <-time.After(timeout):
		srv.Stop()
	}
}
