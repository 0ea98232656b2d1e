// Command auth serves the auth service over gRPC: the 8-hour SDK tokens,
// kept in Redis.
package main

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/liveproctor/workspaces/pkg/lifecycle"
	"github.com/liveproctor/workspaces/services/auth/internal/service"
)

func main() { lifecycle.Main("auth", service.ConfigFromEnv, run) }

// run serves until ctx ends (SIGTERM), then drains.
func run(ctx context.Context, cfg service.Config, logger *slog.Logger) error {
	cfg.GRPCClient.Apply()
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
