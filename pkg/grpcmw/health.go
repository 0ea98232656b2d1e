package grpcmw

import (
	"context"
	"log/slog"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
)

// ProbeHealth keeps hs in step with a dependency: every interval it runs
// check (bounded by timeout) and reports SERVING or NOT_SERVING for the
// overall status ("") and for each of services, so that readiness probes
// and the gateway stop sending calls while the store is unreachable. It
// returns when ctx ends.
func ProbeHealth(ctx context.Context, hs *health.Server, services []string, interval, timeout time.Duration,
	check func(context.Context) error, logger *slog.Logger, what string) {
	ticker := time.NewTicker(interval)
	defer ticker.Stop()
	for {
		checkCtx, cancel := context.WithTimeout(ctx, timeout)
		err := check(checkCtx)
		cancel()
		if ctx.Err() != nil {
			return
		}
		st := healthpb.HealthCheckResponse_SERVING
		if err != nil {
			st = healthpb.HealthCheckResponse_NOT_SERVING
			logger.Warn(what+" unreachable", "error", err.Error())
		}
		hs.SetServingStatus("", st)
		for _, name := range services {
			hs.SetServingStatus(name, st)
		}
		select {
		case <-ctx.Done():
			return
		case <-ticker.C:
		}
	}
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
