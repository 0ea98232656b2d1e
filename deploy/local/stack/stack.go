// Package stack runs the whole service on one machine: the embedded
// MongoDB-protocol store and redis-server (unless external ones are given),
// then the workspace service, the auth service and the gateway as child
// processes of the real binaries. `make run` (cmd/devstack) and the
// end-to-end tests both use it, so the tests exercise what users run.
package stack

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/liveproctor/workspaces/deploy/local/ferret"
	"github.com/liveproctor/workspaces/deploy/local/redisproc"
)

// Options says what to start and where.
type Options struct {
	// BinDir holds the workspace, auth and gateway binaries (see Build).
	BinDir string
	// DataDir holds the stand-ins' data: DataDir/mongodb and DataDir/redis.
	DataDir string

	// MongoURI and RedisAddr point at external servers; when empty the
	// stack starts FerretDB and redis-server itself.
	MongoURI  string
	RedisAddr string
	// PersistRedis keeps the started redis-server's data across restarts.
	PersistRedis bool

	// Listen addresses; empty picks a free loopback port.
	GatewayAddr   string
	WorkspaceAddr string
	AuthAddr      string

	// Env is added to every child's environment (keys, bootstrap pair,
	// timeouts), after this process's own environment.
	Env []string
	// ServiceEnv is added to one child's environment, by name ("workspace",
	// "auth", "gateway"), after Env: settings that must differ between
	// them, such as PPROF_ADDR.
	ServiceEnv map[string][]string
	// Output receives the children's output, one prefixed line at a time.
	// Nil discards it.
	Output io.Writer
	// ReadyTimeout bounds the wait for the gateway to report ready.
	// Zero means 2 minutes.
	ReadyTimeout time.Duration
}

// Stack is a running set of servers.
type Stack struct {
	GatewayURL    string // http://host:port
	GatewayAddr   string
	WorkspaceAddr string
	AuthAddr      string
	MongoURI      string
	RedisAddr     string
	// Where the services serve /metrics (the gateway serves it itself).
	WorkspaceMetricsAddr string
	AuthMetricsAddr      string

	// Ferret and Redis are the stand-ins the stack started, or nil when
	// external servers were given. Tests stop and restart them.
	Ferret *ferret.Server
	Redis  *redisproc.Server

	children []*child // in start order
	exited   chan error
}

// Start starts everything and returns once the gateway reports ready (both
// services answer their health checks). On failure whatever was started is
// stopped again.
func Start(ctx context.Context, opts Options) (st *Stack, err error) {
	s := &Stack{MongoURI: opts.MongoURI, RedisAddr: opts.RedisAddr, exited: make(chan error, len(commands))}
	defer func() {
		if err != nil {
			_ = s.Close()
		}
	}()
	out := &lockedWriter{w: opts.Output}
	if opts.Output == nil {
		out.w = io.Discard
	}

	if s.MongoURI == "" {
		s.Ferret, err = ferret.Start(ctx, ferret.Options{Dir: filepath.Join(opts.DataDir, "mongodb")})
		if err != nil {
			return nil, fmt.Errorf("start the embedded MongoDB-protocol store: %w", err)
		}
		s.MongoURI = s.Ferret.URI()
	}
	if s.RedisAddr == "" {
		s.Redis, err = redisproc.Start(ctx, redisproc.Options{Dir: filepath.Join(opts.DataDir, "redis"), Persist: opts.PersistRedis})
		if err != nil {
			return nil, fmt.Errorf("start redis-server: %w", err)
		}
		s.RedisAddr = s.Redis.Addr()
	}

	for _, a := range []struct {
		dst *string
		src string
	}{
		{&s.GatewayAddr, opts.GatewayAddr}, {&s.WorkspaceAddr, opts.WorkspaceAddr}, {&s.AuthAddr, opts.AuthAddr},
		{&s.WorkspaceMetricsAddr, ""}, {&s.AuthMetricsAddr, ""},
	} {
		*a.dst = a.src
		if *a.dst == "" {
			if *a.dst, err = FreeAddr(); err != nil {
				return nil, err
			}
		}
	}
	s.GatewayURL = "http://" + s.GatewayAddr

	base := append(append(os.Environ(), opts.Env...),
		"MONGODB_URI="+s.MongoURI,
		"REDIS_ADDR="+s.RedisAddr,
		"WORKSPACE_GRPC_ADDR="+s.WorkspaceAddr,
		"AUTH_GRPC_ADDR="+s.AuthAddr,
		"GATEWAY_ADDR="+s.GatewayAddr,
		"WORKSPACE_SERVICE_ADDR="+s.WorkspaceAddr,
		"AUTH_SERVICE_ADDR="+s.AuthAddr,
	)
	own := map[string][]string{
		"workspace": {"METRICS_ADDR=" + s.WorkspaceMetricsAddr},
		"auth":      {"METRICS_ADDR=" + s.AuthMetricsAddr},
	}
	for _, c := range commands {
		env := append(append(append([]string(nil), base...), own[c.name]...), opts.ServiceEnv[c.name]...)
		ch, err := startChild(c.name, filepath.Join(opts.BinDir, c.name), nil, env, out)
		if err != nil {
			return nil, err
		}
		s.children = append(s.children, ch)
		go func() {
			<-ch.done
			s.exited <- ch.exitError()
		}()
	}

	timeout := opts.ReadyTimeout
	if timeout == 0 {
		timeout = 2 * time.Minute
	}
	if err := s.waitReady(ctx, timeout); err != nil {
		return nil, err
	}
	return s, nil
}

// Signal sends sig to the named child: "workspace", "auth" or "gateway".
func (s *Stack) Signal(name string, sig os.Signal) error {
	c, err := s.child(name)
	if err != nil {
		return err
	}
	return c.cmd.Process.Signal(sig)
}

// Wait waits up to timeout for the named child to exit, and returns nil if
// it exited with status 0.
func (s *Stack) Wait(name string, timeout time.Duration) error {
	c, err := s.child(name)
	if err != nil {
		return err
	}
	select {
	case <-c.done:
		if c.err != nil {
			return c.exitError()
		}
		return nil
	case <-time.After(timeout):
		return fmt.Errorf("%s did not exit within %s", name, timeout)
	}
}

// PID returns the process id of the named child, for measurements.
func (s *Stack) PID(name string) (int, error) {
	c, err := s.child(name)
	if err != nil {
		return 0, err
	}
	return c.cmd.Process.Pid, nil
}

func (s *Stack) child(name string) (*child, error) {
	for _, c := range s.children {
		if c.name == name {
			return c, nil
		}
	}
	return nil, fmt.Errorf("no child named %q", name)
}

// Exited receives an error when a child process ends on its own.
func (s *Stack) Exited() <-chan error { return s.exited }

// waitReady polls the gateway's /readyz until it answers 200.
func (s *Stack) waitReady(ctx context.Context, timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	client := &http.Client{Timeout: 3 * time.Second}
	var last error
	for {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, s.GatewayURL+"/readyz", nil)
		resp, err := client.Do(req)
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
			err = fmt.Errorf("/readyz answered %s", resp.Status)
		}
		last = err
		select {
		case err := <-s.exited:
			return fmt.Errorf("while waiting for the stack to be ready: %w", err)
		case <-ctx.Done():
			return fmt.Errorf("the gateway was not ready within %s: %w", timeout, last)
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// Close stops the gateway first, then the services, then the stand-ins the
// stack started, each given the time to finish what it is doing.
func (s *Stack) Close() error {
	var errs []error
	for i := len(s.children) - 1; i >= 0; i-- {
		errs = append(errs, s.children[i].stop())
	}
	if s.Redis != nil {
		errs = append(errs, s.Redis.Stop())
	}
	if s.Ferret != nil {
		errs = append(errs, s.Ferret.Stop())
	}
	return errors.Join(errs...)
}

// FreeAddr returns a loopback address with a port nobody listens on now.
func FreeAddr() (string, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", fmt.Errorf("find a free port: %w", err)
	}
	defer l.Close()
	return l.Addr().String(), nil
}

// ThrowawayEnv is the environment of a stack whose data dies with it (tests,
// benchmarks): fixed, public encryption and HMAC keys, and a root workspace
// "root" with the given key pair. Never use it for data that matters.
func ThrowawayEnv(rootKey, rootSecret string) []string {
	return []string{
		"KEY_ENCRYPTION_KEY=" + strings.Repeat("A", 43) + "=",
		"KEY_HMAC_KEY=" + strings.Repeat("B", 43) + "=",
		"BOOTSTRAP_WORKSPACE_ID=root",
		"BOOTSTRAP_WORKSPACE_NAME=Root",
		"BOOTSTRAP_APP_KEY=" + rootKey,
		"BOOTSTRAP_APP_SECRET=" + rootSecret,
	}
}
