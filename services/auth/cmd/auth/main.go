// Command auth serves the auth service over gRPC: the 8-hour SDK tokens,
// kept in Redis.
package main

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"syscall"

	"github.com/liveproctor/workspaces/pkg/envconfig"
	"github.com/liveproctor/workspaces/pkg/telemetry"
	"github.com/liveproctor/workspaces/services/auth/internal/service"
)

func main() {
	logger, flushLogs, err := telemetry.NewLogger("auth")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	err = run(logger)
	if err != nil {
		logger.Error("auth service stopped", "error", err.Error())
		flushLogs()
		os.Exit(1)
	}
	flushLogs()
}

func run(logger *slog.Logger) error {
	cfg, err := service.ConfigFromEnv(envconfig.New())
	if err != nil {
		return fmt.Errorf("configuration: %w", err)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	stopTracing, err := telemetry.StartTracing(ctx, "auth")
	if err != nil {
		return fmt.Errorf("tracing: %w", err)
	}
	defer stopTracing(context.Background())
	if err := telemetry.ServePprof(logger); err != nil {
		return fmt.Errorf("PPROF_ADDR: %w", err)
	}
	svc, err := service.Start(cfg, logger)
	if err != nil {
		return err
	}
	select {
	case <-ctx.Done():
		logger.Info("shutting down")
	case err := <-svc.Done():
		logger.Error("gRPC server stopped", "error", fmt.Sprint(err))
	}
	return svc.Close()
}
