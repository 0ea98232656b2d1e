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
	"errors"
	"flag"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/redis/go-redis/v9"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "benchref:", err)
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
	flag.StringVar(&c.listen, "listen", envOr("BENCHREF_ADDR", "127.0.0.1:8090"), "listen address (BENCHREF_ADDR)")
	flag.StringVar(&c.redisAddr, "redis", envOr("REDIS_ADDR", "127.0.0.1:6379"), "redis address (REDIS_ADDR)")
	flag.StringVar(&c.appKey, "app-key", os.Getenv("BENCHREF_APP_KEY"), "the one accepted app key (BENCHREF_APP_KEY)")
	flag.StringVar(&c.appSecret, "app-secret", os.Getenv("BENCHREF_APP_SECRET"), "its secret (BENCHREF_APP_SECRET)")
	flag.Parse()
	if c.appKey == "" || c.appSecret == "" {
		return c, errors.New("a key pair is required: -app-key and -app-secret (or BENCHREF_APP_KEY, BENCHREF_APP_SECRET)")
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

	rdb := redis.NewClient(&redis.Options{Addr: cfg.redisAddr})
	defer rdb.Close()
	if err := rdb.Ping(ctx).Err(); err != nil {
		return fmt.Errorf("reach redis at %s: %w", cfg.redisAddr, err)
	}

	mux := http.NewServeMux()
	mux.Handle("POST /api/login/sdk", &loginHandler{rdb: rdb, key: []byte(cfg.appKey), secret: []byte(cfg.appSecret)})
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusOK) })
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}

	lis, err := net.Listen("tcp", cfg.listen)
	if err != nil {
		return fmt.Errorf("listen: %w", err)
	}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(lis) }()
	fmt.Printf("benchref listening on %s (redis %s)\n", lis.Addr(), cfg.redisAddr)

	select {
	case err := <-served:
		return fmt.Errorf("serve: %w", err)
	case <-ctx.Done():
	}
	shutdown, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	return srv.Shutdown(shutdown)
}

func envOr(name, def string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return def
}
