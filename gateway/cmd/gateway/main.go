// Command gateway serves the JSON/REST face of the workspace and auth
// services, translating each call to gRPC.
package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"time"

	"github.com/liveproctor/workspaces/gateway/internal/config"
	"github.com/liveproctor/workspaces/gateway/internal/server"
	"github.com/liveproctor/workspaces/pkg/lifecycle"
	"github.com/liveproctor/workspaces/pkg/telemetry"
)

func main() { lifecycle.Main("gateway", config.Read, run) }

// run serves until SIGINT or SIGTERM, then drains in-flight requests for at
// most the configured shutdown timeout.
func run(ctx context.Context, cfg config.Config, logger *slog.Logger) error {
	cfg.GRPC.Apply()
	srv, err := server.New(cfg, logger)
	if err != nil {
		return err
	}
	metrics, err := telemetry.ServeMetrics(cfg.MetricsAddr, srv.Metrics(), logger)
	if err != nil {
		return errors.Join(fmt.Errorf("METRICS_ADDR: %w", err), srv.Shutdown(context.Background()))
	}
	defer func() { _ = metrics.Close(context.Background()) }()
	lis, err := net.Listen("tcp", cfg.Addr)
	if err != nil {
		return errors.Join(err, srv.Shutdown(context.Background()))
	}

	served := make(chan error, 1)
	go func() { served <- srv.Serve(lis) }()
	logger.Info("gateway listening", "addr", lis.Addr().String(), "metrics_addr", metrics.Addr(),
		"workspace_service", cfg.WorkspaceServiceAddr, "auth_service", cfg.AuthServiceAddr)

	select {
	case err := <-served:
		if errors.Is(err, http.ErrServerClosed) {
			return nil
		}
		return errors.Join(err, srv.Shutdown(context.Background()))
	case <-ctx.Done():
	}
	srv.Drain()
	if cfg.DrainDelay > 0 {
		logger.Info("gateway draining: /readyz answers 503", "delay", cfg.DrainDelay.String())
		time.Sleep(cfg.DrainDelay)
	}
	logger.Info("gateway shutting down", "timeout", cfg.ShutdownTimeout.String())
	shutdownCtx, cancel := context.WithTimeout(context.Background(), cfg.ShutdownTimeout)
	defer cancel()
	if err := srv.Shutdown(shutdownCtx); err != nil {
		return err
	}
	if err := <-served; err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}
