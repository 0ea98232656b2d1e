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
	"errors"
	"flag"
	"fmt"
	"net"
	"os"
	"os/signal"
	"syscall"

	"github.com/redis/go-redis/v9"
	"google.golang.org/grpc"

	authv1 "github.com/liveproctor/workspaces/pkg/gen/auth/v1"
	"github.com/liveproctor/workspaces/pkg/grpcmw"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "benchauth:", err)
		os.Exit(1)
	}
}

// config is what the flags and environment set.
type config struct {
	listen, redisAddr string
	appKey, appSecret string
}

func parseFlags() (config, error) {
	var c config
	flag.StringVar(&c.listen, "listen", envOr("BENCHAUTH_ADDR", "127.0.0.1:9092"), "listen address (BENCHAUTH_ADDR)")
	flag.StringVar(&c.redisAddr, "redis", envOr("REDIS_ADDR", "127.0.0.1:6379"), "redis address (REDIS_ADDR)")
	flag.StringVar(&c.appKey, "app-key", os.Getenv("BENCHAUTH_APP_KEY"), "the one accepted app key (BENCHAUTH_APP_KEY)")
	flag.StringVar(&c.appSecret, "app-secret", os.Getenv("BENCHAUTH_APP_SECRET"), "its secret (BENCHAUTH_APP_SECRET)")
	flag.Parse()
	if c.appKey == "" || c.appSecret == "" {
		return c, errors.New("a key pair is required: -app-key and -app-secret (or BENCHAUTH_APP_KEY, BENCHAUTH_APP_SECRET)")
	}
	return c, nil
}

func run() error {
	cfg, err := parseFlags()
	if err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()

	// go-redis's defaults, as benchref's: the two differ only by the hop.
	rdb := redis.NewClient(&redis.Options{Addr: cfg.redisAddr})
	defer rdb.Close()
	if err := rdb.Ping(ctx).Err(); err != nil {
		return fmt.Errorf("reach redis at %s: %w", cfg.redisAddr, err)
	}

	srv := grpc.NewServer(grpcmw.ServerTransportOptions()...)
	authv1.RegisterAuthServiceServer(srv, &tokenServer{rdb: rdb, key: []byte(cfg.appKey), secret: []byte(cfg.appSecret)})

	// Redis answered before the port opens, so an open port means ready.
	lis, err := net.Listen("tcp", cfg.listen)
	if err != nil {
		return fmt.Errorf("listen: %w", err)
	}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(lis) }()
	fmt.Printf("benchauth listening on %s (redis %s)\n", lis.Addr(), cfg.redisAddr)

	select {
	case err := <-served:
		return fmt.Errorf("serve: %w", err)
	case <-ctx.Done():
	}
	srv.GracefulStop()
	return nil
}

func envOr(name, def string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return def
}
