// Command workspace serves the workspace service over gRPC.
package main

import (
	"context"
	"fmt"
	"log/slog"
	"os"

	"github.com/liveproctor/workspaces/pkg/lifecycle"
	"github.com/liveproctor/workspaces/services/workspace/internal/service"
)

func main() { lifecycle.Main("workspace", service.ConfigFromEnv, run) }

// run serves until ctx ends (SIGTERM), then drains.
func run(ctx context.Context, cfg service.Config, logger *slog.Logger) error {
	cfg.GRPCClient.Apply()
	svc, err := service.Start(ctx, cfg, logger, os.Stdout)
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
