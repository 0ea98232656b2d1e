package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/liveproctor/workspaces/deploy/local/loadgen"
	"github.com/liveproctor/workspaces/deploy/local/stack"
	"github.com/liveproctor/workspaces/pkg/basicauth"
	authv1 "github.com/liveproctor/workspaces/pkg/gen/auth/v1"
	workspacev1 "github.com/liveproctor/workspaces/pkg/gen/workspace/v1"
	"github.com/liveproctor/workspaces/pkg/testenv"
)

// The fixed bootstrap key pair of the benchmark's stack; benchref accepts
// the same pair. The data folder is temporary, so nothing outlives the run.
const (
	rootWorkspace = "root" // the root stack.ThrowawayEnv bootstraps
	rootKey       = "6f1d2c3b-bench-4a5b-9c8d-0e1f2a3b4c5d"
	rootSecret    = "b3e2d1c0-bench-4f5e-8d7c-6b5a49382716"
)

// stackEnv is what the services are started with, besides the addresses
// the stack package sets: the settings of `make run`, with fixed keys.
//
// With -limits (the default) the rate limits stay on, as in production:
// every call pays the limit's and the failure counters' Redis work. Only
// the key pair's rate is raised (RATE_LIMIT is a setting, and 100 a second
// would answer most of the load with 429), since the load comes from one key
// pair at one address at thousands of requests a second. -limits=false
// runs with RATE_LIMIT=0 and the failure limits off, to show what the
// limits cost.
func stackEnv(cfg config) []string {
	env := stack.ThrowawayEnv(rootKey, rootSecret)
	if !cfg.Limits {
		return append(env, stack.LimitsOffEnv()...)
	}
	return append(env, "RATE_LIMIT=1000000", "RATE_LIMIT_BURST=1000000")
}

// benchEnv is stackEnv, with room for the large list and the store-scale
// scenario: on the embedded store one filtered page over 10,000 workspaces
// or so takes longer than the default 5 s call deadline, which would answer
// 503 instead of a figure. The deadlines bound the calls; they do
// not change how fast they are.
func benchEnv(cfg config) []string {
	env := stackEnv(cfg)
	if !cfg.Large && !cfg.Only.includes("store") {
		return env
	}
	// A connection's age must not cut such a call short either.
	return append(env, "WORKSPACE_CALL_TIMEOUT=2m", "REQUEST_TIMEOUT=2m", "MONGODB_TIMEOUT=2m", "GRPC_MAX_CONNECTION_AGE_GRACE=2m")
}

// services are the stack's services, by their names in the stack package:
// the processes measured, and profiled under -profile.
var services = []string{"gateway", "workspace", "auth"}

// env is everything a measurement talks to.
type env struct {
	stack *stack.Stack
	ref   *helper // benchref
	// refRedis is benchref's own redis-server, so that the two sides'
	// Redis CPU and memory are counted apart.
	refRedis *testenv.Server
	// floorAuth (benchauth) behind benchproxy is the login floor, with its
	// own redis-server, floorRedis.
	floorAuth  *helper
	floorRedis *testenv.Server
	proxy      *helper  // benchproxy
	log        *os.File // the servers' output
	tmp        string   // the run's temporary folder (wrk's scripts and figures)
	// seeded is how many bench workspaces (bench-000001 on, see seedBody)
	// the store holds: the list and store-scale scenarios both grow it.
	seeded int

	http      *http.Client
	basic     http.Header // Authorization with the root pair, JSON content
	grpcConns []*grpc.ClientConn
	workspace workspacev1.WorkspaceServiceClient
	auth      authv1.AuthServiceClient

	pprofAddrs map[string]string // by service, with -profile
}

// startEnv builds the binaries into tmp, then starts the stack, benchref,
// benchauth and benchproxy.
func startEnv(ctx context.Context, cfg config, root, tmp string) (e *env, err error) {
	binDir := filepath.Join(tmp, "bin")
	progress("building the stack, benchref, benchauth and benchproxy")
	if err := stack.Build(ctx, root, binDir); err != nil {
		return nil, err
	}
	build := exec.CommandContext(ctx, "go", "build", "-o", binDir+string(filepath.Separator),
		"./deploy/local/cmd/benchref", "./deploy/local/cmd/benchauth", "./deploy/local/cmd/benchproxy")
	build.Dir = root
	if out, err := build.CombinedOutput(); err != nil {
		return nil, fmt.Errorf("build benchref, benchauth and benchproxy: %w\n%s", err, out)
	}

	e = &env{tmp: tmp}
	defer func() {
		if err != nil {
			_ = e.Close()
			e.printLogTail(os.Stderr, 40)
		}
	}()
	if e.log, err = os.Create(filepath.Join(tmp, "servers.log")); err != nil {
		return nil, fmt.Errorf("create the servers' log: %w", err)
	}
	var out io.Writer = e.log
	if cfg.Verbose {
		out = io.MultiWriter(e.log, os.Stderr)
	}

	var serviceEnv map[string][]string
	if cfg.ProfileDir != "" {
		if err := os.MkdirAll(cfg.ProfileDir, 0o755); err != nil {
			return nil, fmt.Errorf("make the profile folder: %w", err)
		}
		if serviceEnv, e.pprofAddrs, err = pprofEnv(); err != nil {
			return nil, err
		}
	}
	progress("starting the stack (FerretDB, redis-server, workspace, auth, gateway)")
	e.stack, err = stack.Start(ctx, stack.Options{
		BinDir:     binDir,
		DataDir:    filepath.Join(tmp, "data"),
		Env:        benchEnv(cfg),
		ServiceEnv: serviceEnv,
		Output:     out,
	})
	if err != nil {
		return nil, fmt.Errorf("start the stack: %w", err)
	}
	progress("starting benchref and its redis-server")
	e.refRedis, err = testenv.StartRedis(ctx, testenv.RedisOptions{Dir: filepath.Join(tmp, "ref-redis"), Output: out})
	if err != nil {
		return nil, fmt.Errorf("start benchref's redis-server: %w", err)
	}
	e.ref, err = startReference(ctx, filepath.Join(binDir, "benchref"), e.refRedis.Addr(), rootKey, rootSecret, out)
	if err != nil {
		return nil, err
	}
	progress("starting benchauth and its redis-server")
	e.floorRedis, err = testenv.StartRedis(ctx, testenv.RedisOptions{Dir: filepath.Join(tmp, "floor-redis"), Output: out})
	if err != nil {
		return nil, fmt.Errorf("start benchauth's redis-server: %w", err)
	}
	e.floorAuth, err = startTokenService(ctx, filepath.Join(binDir, "benchauth"), e.floorRedis.Addr(), rootKey, rootSecret, out)
	if err != nil {
		return nil, err
	}
	progress("starting benchproxy")
	e.proxy, err = startProxy(ctx, filepath.Join(binDir, "benchproxy"), e.stack.WorkspaceAddr, e.floorAuth.Addr, out)
	if err != nil {
		return nil, err
	}

	e.http = loadgen.NewHTTPClient(cfg.Conns)
	e.basic = http.Header{
		"Authorization": {basicauth.Header(rootKey, rootSecret)},
		"Content-Type":  {"application/json"},
	}
	wsConn, err := e.dial(e.stack.WorkspaceAddr)
	if err != nil {
		return nil, err
	}
	authConn, err := e.dial(e.stack.AuthAddr)
	if err != nil {
		return nil, err
	}
	e.workspace = workspacev1.NewWorkspaceServiceClient(wsConn)
	e.auth = authv1.NewAuthServiceClient(authConn)
	return e, nil
}

func (e *env) dial(addr string) (*grpc.ClientConn, error) {
	conn, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		return nil, fmt.Errorf("dial %s: %w", addr, err)
	}
	e.grpcConns = append(e.grpcConns, conn)
	return conn, nil
}

// processes returns the measured processes' ids by name.
func (e *env) processes() ([]namedPID, error) {
	var ps []namedPID
	for _, name := range services {
		pid, err := e.stack.PID(name)
		if err != nil {
			return nil, err
		}
		ps = append(ps, namedPID{name, pid})
	}
	return append(ps, namedPID{"benchref", e.ref.PID()}, namedPID{"benchproxy", e.proxy.PID()},
		namedPID{"benchauth", e.floorAuth.PID()}), nil
}

// serverProcesses is processes and the stand-ins: every server whose CPU
// time and memory the figures count.
func (e *env) serverProcesses() ([]namedPID, error) {
	ps, err := e.processes()
	if err != nil {
		return nil, err
	}
	return append(ps, namedPID{"redis-server", e.stack.Redis.PID()}, namedPID{"ferretdb", e.stack.FerretDB.PID()},
		namedPID{"benchref-redis", e.refRedis.PID()}, namedPID{"benchauth-redis", e.floorRedis.PID()}), nil
}

// cpuProcesses is serverProcesses and this process (the Go load generator
// of the gRPC scenarios; idle while wrk drives HTTP).
func (e *env) cpuProcesses() ([]namedPID, error) {
	ps, err := e.serverProcesses()
	if err != nil {
		return nil, err
	}
	return append(ps, namedPID{"bench", os.Getpid()}), nil
}

type namedPID struct {
	Name string
	PID  int
}

// Close stops benchproxy, benchauth, benchref, their redis-servers and the
// stack, and closes the clients.
func (e *env) Close() error {
	var errs []error
	for _, c := range e.grpcConns {
		errs = append(errs, c.Close())
	}
	if e.http != nil {
		e.http.CloseIdleConnections()
	}
	for _, h := range []*helper{e.proxy, e.floorAuth, e.ref} {
		if h != nil {
			errs = append(errs, h.Stop())
		}
	}
	for _, r := range []*testenv.Server{e.floorRedis, e.refRedis} {
		if r != nil {
			errs = append(errs, r.Stop())
		}
	}
	if e.stack != nil {
		errs = append(errs, e.stack.Close())
	}
	if e.log != nil {
		errs = append(errs, e.log.Close())
	}
	return errors.Join(errs...)
}

// printLogTail writes the last n lines the servers printed, to explain a
// failure.
func (e *env) printLogTail(w io.Writer, n int) {
	if e == nil || e.log == nil {
		return
	}
	data, err := os.ReadFile(e.log.Name())
	if err != nil || len(data) == 0 {
		return
	}
	lines := bytes.Split(bytes.TrimRight(data, "\n"), []byte("\n"))
	lines = lines[max(len(lines)-n, 0):]
	fmt.Fprintf(w, "--- last %d lines of the servers' output ---\n%s\n", len(lines), bytes.Join(lines, []byte("\n")))
}

// progress tells the operator what is going on (on stderr, so stdout holds
// only the results).
func progress(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "%s  %s\n", time.Now().Format("15:04:05"), fmt.Sprintf(format, args...))
}
