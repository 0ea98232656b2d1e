// Package stack runs the whole service on one machine: FerretDB (the
// MongoDB-protocol stand-in) and redis-server, unless external ones are
// given, then the workspace service, the auth service and the gateway, all
// as child processes (pkg/testenv), the services from the real binaries.
// `make run` (cmd/devstack), the end-to-end tests and the benchmark all use
// it, so the tests exercise what users run.
//
// With Options.Replicas it runs several processes of each service instead,
// which find each other by name (replicas.go).
package stack

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
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

	// Listen addresses; empty picks a free loopback port. With Replicas,
	// GatewayAddr is the first gateway's, and the other two must be empty.
	GatewayAddr   string
	WorkspaceAddr string
	AuthAddr      string

	// Replicas runs several processes of each service (see Replicas); the
	// zero value runs one of each, at the addresses above.
	Replicas Replicas

	// Env is added to every service's environment (keys, bootstrap pair,
	// timeouts), after this process's own environment.
	Env []string
	// ServiceEnv is added to one service's environment, by name ("workspace",
	// "auth", "gateway"), after Env: settings that must differ between
	// them, such as PPROF_ADDR. Every replica of a service gets the same.
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
	GatewayURL  string // http://host:port
	GatewayAddr string
	// WorkspaceAddr and AuthAddr are the gRPC targets the services are
	// given: host:port, or with replicas a dns:// target naming them all.
	WorkspaceAddr string
	AuthAddr      string
	MongoURI      string
	RedisAddr     string
	// Where each binary serves /metrics (METRICS_ADDR), a free loopback
	// port each. With replicas, the gateway's fields are the first
	// gateway's, and these the first replica's of each service; Replicas
	// lists them all.
	GatewayMetricsAddr   string
	WorkspaceMetricsAddr string
	AuthMetricsAddr      string

	// FerretDB and Redis are the stand-ins the stack started, or nil when
	// external servers were given. Tests stop and restart them.
	FerretDB *testenv.Server
	Redis    *testenv.Server
	// DNS names the replicas of the workspace and auth services; nil
	// without Options.Replicas.
	DNS *testenv.DNSServer

	binDir       string
	output       io.Writer
	serviceEnv   map[string][]string
	base         []string // every process's environment but its own addresses
	readyTimeout time.Duration
	ports        map[string]string // with replicas: the port of each service's name

	mu       sync.Mutex
	replicas []*Replica     // every process started, in start order
	started  map[string]int // processes started, by service
	exited   chan error
}

// Start starts everything and returns once every gateway reports ready
// (both services answer their health checks), and with replicas once
// every replica answers its own. On failure whatever was started is
// stopped again.
func Start(ctx context.Context, opts Options) (st *Stack, err error) {
	s := &Stack{
		MongoURI: opts.MongoURI, RedisAddr: opts.RedisAddr,
		binDir: opts.BinDir, output: opts.Output, serviceEnv: opts.ServiceEnv, readyTimeout: opts.ReadyTimeout,
		started: map[string]int{}, exited: make(chan error, 1),
	}
	if s.readyTimeout == 0 {
		s.readyTimeout = 2 * time.Minute
	}
	defer func() {
		if err != nil {
			_ = s.Close()
		}
	}()
	if err := s.startStores(ctx, opts); err != nil {
		return nil, err
	}
	if opts.Replicas != (Replicas{}) {
		err = s.startReplicas(ctx, opts)
	} else {
		err = s.startOneOfEach(ctx, opts)
	}
	if err != nil {
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

// startOneOfEach starts the three binaries in order, each told where the
// stores and the others are, and waits until the gateway reports ready.
func (s *Stack) startOneOfEach(ctx context.Context, opts Options) error {
	if err := s.chooseAddrs(opts); err != nil {
		return err
	}
	s.base = append(append([]string(nil), opts.Env...),
		"MONGODB_URI="+s.MongoURI,
		"REDIS_ADDR="+s.RedisAddr,
		"WORKSPACE_SERVICE_ADDR="+s.WorkspaceAddr,
		"AUTH_SERVICE_ADDR="+s.AuthAddr,
	)
	addrs := map[string][2]string{
		"workspace": {s.WorkspaceAddr, s.WorkspaceMetricsAddr},
		"auth":      {s.AuthAddr, s.AuthMetricsAddr},
		"gateway":   {s.GatewayAddr, s.GatewayMetricsAddr},
	}
	for _, c := range commands {
		if _, err := s.launch(c.name, c.name, addrs[c.name][0], addrs[c.name][1]); err != nil {
			return err
		}
	}
	ctx, cancel := context.WithTimeout(ctx, s.readyTimeout)
	defer cancel()
	if err := testenv.WaitReady(ctx, testenv.HTTPOK(s.GatewayURL+"/readyz"), s.processes()...); err != nil {
		return fmt.Errorf("the stack was not ready within %s: %w", s.readyTimeout, err)
	}
	return nil
}

// launch starts one process of service, named name, listening on addr and
// serving /metrics on metricsAddr. It reports on s.exited if the process
// ends on its own.
func (s *Stack) launch(service, name, addr, metricsAddr string) (*Replica, error) {
	env := append(append([]string(nil), s.base...), listenVar(service)+"="+addr, "METRICS_ADDR="+metricsAddr)
	p, err := testenv.StartProcess(testenv.Command{
		Name:   name,
		Path:   filepath.Join(s.binDir, service),
		Env:    append(env, s.serviceEnv[service]...),
		Output: s.output,
	})
	if err != nil {
		return nil, err
	}
	r := &Replica{Name: name, Service: service, Addr: addr, MetricsAddr: metricsAddr, proc: p}
	s.mu.Lock()
	s.replicas = append(s.replicas, r)
	s.mu.Unlock()
	go func() {
		<-p.Done()
		if r.ended.Load() {
			return // stopped or killed by the stack
		}
		err := p.Err()
		if err == nil {
			err = fmt.Errorf("%s exited", name)
		}
		select {
		case s.exited <- err:
		default: // one is reported already
		}
	}()
	return r, nil
}

func listenVar(service string) string {
	for _, c := range commands {
		if c.name == service {
			return c.listenVar
		}
	}
	panic("stack: no command " + service)
}

// Signal sends sig to the named process: "workspace", "auth" or
// "gateway", or with replicas one's Name ("workspace-2").
func (s *Stack) Signal(name string, sig os.Signal) error {
	r, err := s.replica(name)
	if err != nil {
		return err
	}
	return r.proc.Signal(sig)
}

// Wait waits up to timeout for the named process to exit, and returns nil
// if it exited with status 0.
func (s *Stack) Wait(name string, timeout time.Duration) error {
	r, err := s.replica(name)
	if err != nil {
		return err
	}
	select {
	case <-r.proc.Done():
		return r.proc.Err()
	case <-time.After(timeout):
		return fmt.Errorf("%s did not exit within %s", name, timeout)
	}
}

// PID returns the process id of the named process, for measurements.
func (s *Stack) PID(name string) (int, error) {
	r, err := s.replica(name)
	if err != nil {
		return 0, err
	}
	return r.PID(), nil
}

func (s *Stack) replica(name string) (*Replica, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, r := range s.replicas {
		if r.Name == name {
			return r, nil
		}
	}
	return nil, fmt.Errorf("no process named %q", name)
}

// processes are every process started, in start order.
func (s *Stack) processes() []*testenv.Process {
	s.mu.Lock()
	defer s.mu.Unlock()
	ps := make([]*testenv.Process, len(s.replicas))
	for i, r := range s.replicas {
		ps[i] = r.proc
	}
	return ps
}

// Exited receives an error when a process ends on its own (not stopped or
// killed by the stack): the first one.
func (s *Stack) Exited() <-chan error { return s.exited }

// Close stops the gateways first, then the services, the latest started
// first, then the DNS server and the stand-ins the stack started, each
// given the time to finish what it is doing.
func (s *Stack) Close() error {
	s.mu.Lock()
	replicas := append([]*Replica(nil), s.replicas...)
	s.mu.Unlock()
	var errs []error
	for _, gateways := range []bool{true, false} {
		for i := len(replicas) - 1; i >= 0; i-- {
			if r := replicas[i]; (r.Service == "gateway") == gateways {
				r.ended.Store(true)
				errs = append(errs, r.proc.Stop())
			}
		}
	}
	if s.DNS != nil {
		errs = append(errs, s.DNS.Close())
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
