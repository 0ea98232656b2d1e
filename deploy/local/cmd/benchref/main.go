// Command benchref is the reference server `make bench` compares the stack's
// login with: the same work, and nothing else, in one bare process.
//
// It answers POST /api/login/sdk: a constant-time HTTP Basic check against
// one configured key pair, a JSON decode of {email, workspaceId}, a token of
// 32 random bytes (standard Base64), and
//
//	SET <hex SHA-256 of the token> <json> EX 28800
//
// answering {"auth", "expiresAt"}. There are no workspaces, no access rules,
// no logging, tracing or metrics: it is the floor the stack is measured
// against, not a service.
//
// Flags (each defaults to the environment variable named in its usage):
//
//	benchref -listen 127.0.0.1:8090 -redis 127.0.0.1:6379 -app-key K -app-secret S
package main

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/liveproctor/workspaces/deploy/local/benchlogin"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "benchref:", err)
		os.Exit(1)
	}
}

func run() error {
	cfg, err := benchlogin.ParseFlags("BENCHREF_", "127.0.0.1:8090")
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

	mux := http.NewServeMux()
	mux.Handle("POST /api/login/sdk", &loginHandler{issuer: issuer})
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusOK) })
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}

	lis, err := net.Listen("tcp", cfg.Listen)
	if err != nil {
		return fmt.Errorf("listen: %w", err)
	}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(lis) }()
	fmt.Printf("benchref listening on %s (redis %s)\n", lis.Addr(), cfg.RedisAddr)

	select {
	case err := <-served:
		return fmt.Errorf("serve: %w", err)
	case <-ctx.Done():
	}
	shutdown, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	return srv.Shutdown(shutdown)
}
