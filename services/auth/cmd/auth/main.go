// Command auth serves the auth service over gRPC.
//
// It issues the 8-hour SDK tokens; until that arrives it serves gRPC health
// (and reflection) so the gateway and the orchestrator can already depend on
// it being there.
package main

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"os"
	"os/signal"
	"syscall"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/reflection"

	"github.com/liveproctor/workspaces/pkg/envconfig"
)

func main() {
	logger := slog.New(slog.NewJSONHandler(os.Stderr, nil))
	if err := run(logger); err != nil {
		logger.Error("auth service stopped", "error", err.Error())
		os.Exit(1)
	}
}

func run(logger *slog.Logger) error {
	env := envconfig.New()
	addr := env.Addr("AUTH_GRPC_ADDR", ":9091")
	shutdown := env.Duration("SHUTDOWN_TIMEOUT", 15*time.Second)
	if err := env.Err(); err != nil {
		return fmt.Errorf("configuration: %w", err)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()

	lis, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("AUTH_GRPC_ADDR: %w", err)
	}
	srv := grpc.NewServer()
	hs := health.NewServer()
	healthpb.RegisterHealthServer(srv, hs)
	reflection.Register(srv)
	served := make(chan error, 1)
	go func() { served <- srv.Serve(lis) }()
	logger.Info("auth service serving", "addr", lis.Addr().String())

	select {
	case <-ctx.Done():
	case err := <-served:
		return err
	}
	hs.Shutdown()
	done := make(chan struct{})
	go func() { srv.GracefulStop(); close(done) }()
	select {
	case <-done:
	case <-time.After(shutdown):
		srv.Stop()
	}
	return nil
}
