// Command devstack is what `make run` starts: the gateway, the workspace and
// auth services, FerretDB and redis-server, as child processes in the
// foreground. Ctrl-C stops all of them.
//
// Local state lives in .data/ at the repository root (git-ignored): the
// stand-ins' data, the service's encryption keys (local-secrets.env) and the
// root workspace's key pair (bootstrap-credentials.env), each generated on
// the first run. MONGODB_URI and REDIS_ADDR point the run at external
// servers; every variable in the README's table is passed to the services.
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"

	"github.com/liveproctor/workspaces/deploy/local/stack"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "devstack:", err)
		os.Exit(1)
	}
}

func run() error {
	root, err := stack.RepoRoot()
	if err != nil {
		return err
	}
	dataDir := filepath.Join(root, ".data")
	if err := os.MkdirAll(dataDir, 0o700); err != nil {
		return err
	}
	gatewayAddr := envOr("GATEWAY_ADDR", "127.0.0.1:8080")
	env, boot, err := environment(dataDir, gatewayAddr)
	if err != nil {
		return err
	}

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	binDir := filepath.Join(root, "bin")
	if exe, err := os.Executable(); err == nil {
		binDir = filepath.Dir(exe)
	}
	fmt.Println("starting the stack…")
	s, err := stack.Start(ctx, stack.Options{
		BinDir:         binDir,
		DataDir:        dataDir,
		MongoURI:       os.Getenv("MONGODB_URI"),
		RedisAddr:      os.Getenv("REDIS_ADDR"),
		FerretDBBinary: filepath.Join(binDir, "ferretdb"),
		PersistRedis:   true,
		GatewayAddr:    gatewayAddr,
		WorkspaceAddr:  envOr("WORKSPACE_GRPC_ADDR", "127.0.0.1:9090"),
		AuthAddr:       envOr("AUTH_GRPC_ADDR", "127.0.0.1:9091"),
		Env:            env,
		Output:         os.Stdout,
		ReadyTimeout:   2 * time.Minute,
	})
	if err != nil {
		return err
	}
	printReady(s, boot)
	return waitAndStop(ctx, s)
}

// environment is the services' environment: the local secrets (made on
// the first run), the root workspace's key pair, and the public base URL.
func environment(dataDir, gatewayAddr string) ([]string, bootstrap, error) {
	secrets, err := loadOrCreate(filepath.Join(dataDir, "local-secrets.env"), localSecrets)
	if err != nil {
		return nil, bootstrap{}, err
	}
	boot, err := bootstrapPair(filepath.Join(dataDir, "bootstrap-credentials.env"))
	if err != nil {
		return nil, bootstrap{}, err
	}
	env := append(secrets.environ(), boot.vars.environ()...)
	env = append(env, "PUBLIC_BASE_URL="+envOr("PUBLIC_BASE_URL", "http://"+gatewayAddr))
	return env, boot, nil
}

// printReady tells the user where everything is, and how to call it.
func printReady(s *stack.Stack, boot bootstrap) {
	fmt.Printf("\nReady.\n  gateway (REST):      %s\n  workspace (gRPC):    %s\n  auth (gRPC):         %s\n  MongoDB protocol:    %s\n  Redis:               %s\n"+
		"  metrics:             http://%s/metrics (gateway), http://%s/metrics (workspace), http://%s/metrics (auth)\n",
		s.GatewayURL, s.WorkspaceAddr, s.AuthAddr, redactURI(s.MongoURI), s.RedisAddr,
		s.GatewayMetricsAddr, s.WorkspaceMetricsAddr, s.AuthMetricsAddr)
	if boot.generated {
		fmt.Printf("\nA key pair for the root workspace was generated and saved in %s:\n  appKey:    %s\n  appSecret: %s\n",
			boot.path, boot.vars["BOOTSTRAP_APP_KEY"], boot.vars["BOOTSTRAP_APP_SECRET"])
	} else if boot.path != "" {
		fmt.Printf("\nThe root workspace's key pair is in %s.\n", boot.path)
	}
	fmt.Printf("\nTry:\n  curl -u \"$BOOTSTRAP_APP_KEY:$BOOTSTRAP_APP_SECRET\" %s/api/workspaces\n(after: set -a; . %s; set +a)\n\nCtrl-C stops everything.\n",
		s.GatewayURL, boot.displayPath())
}

// waitAndStop waits for Ctrl-C or for a component to exit, then stops
// everything.
func waitAndStop(ctx context.Context, s *stack.Stack) error {
	select {
	case <-ctx.Done():
		fmt.Println("\nstopping…")
	case err := <-s.Exited():
		fmt.Fprintln(os.Stderr, "devstack:", err, "- stopping the rest")
	}
	if err := s.Close(); err != nil {
		return err
	}
	fmt.Println("stopped.")
	return nil
}

func envOr(name, def string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return def
}
