// Package stack runs the whole service on one machine: FerretDB (the
// MongoDB-protocol stand-in) and redis-server, unless external ones are
// given, then the workspace service, the auth service and the gateway, all
// as child processes (pkg/testenv), the services from the real binaries.
// `make run` (cmd/devstack), the end-to-end tests and the benchmark all use
// it, so the tests exercise what users run.
package stack

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/liveproctor/workspaces/pkg/testenv"
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
	// FerretDBBinary is the ferretdb command to run; empty builds it
	// (testenv.FerretDBBinary).
	FerretDBBinary string
	// PersistRedis keeps the started redis-server's data across restarts.
	PersistRedis bool

	// Listen addresses; empty picks a free loopback port.
	GatewayAddr   string
	WorkspaceAddr string
	AuthAddr      string

	// Env is added to every service's environment (keys, bootstrap pair,
	// timeouts), after this process's own environment.
	Env []string
	// ServiceEnv is added to one service's environment, by name ("workspace",
	// "auth", "gateway"), after Env: settings that must differ between
	// them, such as PPROF_ADDR.
	ServiceEnv map[string][]string
	// Output receives the services' output, one prefixed line at a time.
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
	// Where each binary serves /metrics (METRICS_ADDR), a free loopback
	// port each.
	GatewayMetricsAddr   string
	WorkspaceMetricsAddr string
	AuthMetricsAddr      string

	// FerretDB and Redis are the stand-ins the stack started, or nil when
	// external servers were given. Tests stop and restart them.
	FerretDB *testenv.Server
	Redis    *testenv.Server

	services []*testenv.Process // in start order
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
	if err := s.startStores(ctx, opts); err != nil {
		return nil, err
	}
	if err := s.chooseAddrs(opts); err != nil {
		return nil, err
	}
	if err := s.startServices(opts); err != nil {
		return nil, err
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

// startStores starts the stand-ins of the stores the options do not name:
// FerretDB for MongoDB, and redis-server.
func (s *Stack) startStores(ctx context.Context, opts Options) error {
	var err error
	if s.MongoURI == "" {
		s.FerretDB, err = testenv.StartFerretDB(ctx, testenv.FerretDBOptions{
			Dir: filepath.Join(opts.DataDir, "mongodb"), Binary: opts.FerretDBBinary,
		})
		if err != nil {
			return fmt.Errorf("start the MongoDB-protocol store: %w", err)
		}
		s.MongoURI = s.FerretDB.URI()
	}
	if s.RedisAddr == "" {
		s.Redis, err = testenv.StartRedis(ctx, testenv.RedisOptions{Dir: filepath.Join(opts.DataDir, "redis"), Persist: opts.PersistRedis})
		if err != nil {
			return fmt.Errorf("start redis-server: %w", err)
		}
		s.RedisAddr = s.Redis.Addr()
	}
	return nil
}

// chooseAddrs takes the addresses the options name, and a free loopback
// port for each other one.
func (s *Stack) chooseAddrs(opts Options) error {
	for _, a := range []struct {
		dst *string
		src string
	}{
		{&s.GatewayAddr, opts.GatewayAddr}, {&s.WorkspaceAddr, opts.WorkspaceAddr}, {&s.AuthAddr, opts.AuthAddr},
		{&s.GatewayMetricsAddr, ""}, {&s.WorkspaceMetricsAddr, ""}, {&s.AuthMetricsAddr, ""},
	} {
		*a.dst = a.src
		if *a.dst == "" {
			var err error
			if *a.dst, err = testenv.FreeAddr(); err != nil {
				return err
			}
		}
	}
	s.GatewayURL = "http://" + s.GatewayAddr
	return nil
}

// startServices starts the three binaries in order, each told where the
// stores and the others are, and reports on s.exited when one exits.
func (s *Stack) startServices(opts Options) error {
	base := append(append([]string(nil), opts.Env...),
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
		"gateway":   {"METRICS_ADDR=" + s.GatewayMetricsAddr},
	}
	for _, c := range commands {
		p, err := testenv.StartProcess(testenv.Command{
			Name:   c.name,
			Path:   filepath.Join(opts.BinDir, c.name),
			Env:    append(append(append([]string(nil), base...), own[c.name]...), opts.ServiceEnv[c.name]...),
			Output: opts.Output,
		})
		if err != nil {
			return err
		}
		s.services = append(s.services, p)
		go func() {
			<-p.Done()
			err := p.Err()
			if err == nil {
				err = fmt.Errorf("%s exited", p.Name())
			}
			s.exited <- err
		}()
	}
	return nil
}

// Signal sends sig to the named service: "workspace", "auth" or "gateway".
func (s *Stack) Signal(name string, sig os.Signal) error {
	p, err := s.service(name)
	if err != nil {
		return err
	}
	return p.Signal(sig)
}

// Wait waits up to timeout for the named service to exit, and returns nil
// if it exited with status 0.
func (s *Stack) Wait(name string, timeout time.Duration) error {
	p, err := s.service(name)
	if err != nil {
		return err
	}
	select {
	case <-p.Done():
		return p.Err()
	case <-time.After(timeout):
		return fmt.Errorf("%s did not exit within %s", name, timeout)
	}
}

// PID returns the process id of the named service, for measurements.
func (s *Stack) PID(name string) (int, error) {
	p, err := s.service(name)
	if err != nil {
		return 0, err
	}
	return p.PID(), nil
}

func (s *Stack) service(name string) (*testenv.Process, error) {
	for _, p := range s.services {
		if p.Name() == name {
			return p, nil
		}
	}
	return nil, fmt.Errorf("no service named %q", name)
}

// Exited receives an error when a service ends on its own.
func (s *Stack) Exited() <-chan error { return s.exited }

// waitReady polls the gateway's /readyz until it answers 200.
func (s *Stack) waitReady(ctx context.Context, timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	err := testenv.WaitReady(ctx, testenv.HTTPOK(s.GatewayURL+"/readyz"), s.services...)
	if err != nil {
		return fmt.Errorf("the stack was not ready within %s: %w", timeout, err)
	}
	return nil
}

// Close stops the gateway first, then the services, then the stand-ins the
// stack started, each given the time to finish what it is doing.
func (s *Stack) Close() error {
	var errs []error
	for i := len(s.services) - 1; i >= 0; i-- {
		errs = append(errs, s.services[i].Stop())
	}
	if s.Redis != nil {
		errs = append(errs, s.Redis.Stop())
	}
	if s.FerretDB != nil {
		errs = append(errs, s.FerretDB.Stop())
	}
	return errors.Join(errs...)
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

// LimitsOffEnv turns off the services' rate limits and failed-authentication
// limits: for benchmarks, and for tests that share one stack and one client
// address (the limits have tests of their own).
func LimitsOffEnv() []string {
	return []string{"RATE_LIMIT=0", "AUTH_FAILURE_LIMIT=0", "AUTH_FAILURE_LIMIT_PER_ADDRESS=0"}
}
