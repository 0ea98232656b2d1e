// Command benchauth is the token service of the login floor `make bench`
// measures: the least a gRPC token service behind an HTTP front can do, in
// one bare process.
//
// It serves the real auth.v1.AuthService, of which only CreateSdkToken
// does anything (every other method answers Unimplemented), and does
// exactly benchref's work: a constant-time check of the HTTP Basic pair in
// the call's authorization metadata against one configured pair, a token
// of 32 random bytes (standard Base64), and
//
//	SET <hex SHA-256 of the token> <json> EX 28800
//
// answering {auth, expiresAt}. It runs with our servers' gRPC transport
// options (pkg/grpcmw) and nothing else: no interceptors, access rules,
// rate limits, revocation indexes, logs or metrics. benchproxy's
// POST /api/login/sdk is its HTTP front; the pair is the floor of the
// gateway → auth service → Redis architecture.
//
// It is a command of its own rather than a mode of benchref so that
// benchref stays a plain net/http process (no gRPC in its binary) and each
// shows under its own name in the CPU and memory tables.
//
// Flags (each defaults to the environment variable named in its usage):
//
//	benchauth -listen 127.0.0.1:9092 -redis 127.0.0.1:6379 -app-key K -app-secret S
package main

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/signal"
	"syscall"

	"google.golang.org/grpc"

	"github.com/liveproctor/workspaces/deploy/local/benchlogin"
	authv1 "github.com/liveproctor/workspaces/pkg/gen/auth/v1"
	"github.com/liveproctor/workspaces/pkg/grpcmw"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "benchauth:", err)
		os.Exit(1)
	}
}

func run() error {
	cfg, err := benchlogin.ParseFlags("BENCHAUTH_", "127.0.0.1:9092")
	if err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()

	issuer, err := benchlogin.Connect(ctx, cfg)
	if err != nil {
		return err
	}
	defer issuer.Close()

	srv := grpc.NewServer(grpcmw.ServerTransportOptions(grpcmw.ServerSettings{
		MaxConnectionAge: grpcmw.DefaultMaxConnectionAge, MaxConnectionAgeGrace: grpcmw.DefaultMaxConnectionAgeGrace,
	})...)
	authv1.RegisterAuthServiceServer(srv, &tokenServer{issuer: issuer})

	// Redis answered before the port opens, so an open port means ready.
	lis, err := net.Listen("tcp", cfg.Listen)
	if err != nil {
		return fmt.Errorf("listen: %w", err)
	}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(lis) }()
	fmt.Printf("benchauth listening on %s (redis %s)\n", lis.Addr(), cfg.RedisAddr)

	select {
	case err := <-served:
		return fmt.Errorf("serve: %w", err)
	case <-ctx.Done():
	}
	srv.GracefulStop()
	return nil
}
