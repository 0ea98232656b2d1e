// Command bench measures the running service against a bare reference on
// this machine and writes the figures to bench/latest.md. `make bench` runs it after the Go micro-benchmarks.
//
// It builds and starts the stack as `make run` does (FerretDB and
// redis-server, the workspace and auth services and the gateway, on
// loopback, with a temporary data folder and a fixed bootstrap key pair),
// and benchref, a bare net/http + go-redis login server doing only the
// login's essential work against a redis-server of its own, benchauth, a
// bare gRPC token service doing the same work against another, and
// benchproxy, a bare HTTP front making GetWorkspace's gRPC call and, in
// front of benchauth, the login's. wrk drives the HTTP load, the Go load
// generator (package loadgen) the gRPC calls:
//
//   - SDK login, reference, floor (benchproxy → benchauth) and stack
//     alternating A B C A B C, with each server process's CPU per request
//     and peak RSS during that load;
//   - GetWorkspace through the gateway and through benchproxy, alternating
//     at -conns connections (the gateway's cost over the floor), and at one
//     caller interleaved with the direct gRPC call;
//   - token introspection over gRPC on the auth service;
//   - the store at scale: a filtered list, an update and a create, one
//     caller, as the store grows in steps (-store-steps), until every one
//     is past the p50 the README holds it to;
//   - a filtered list over 1,000 seeded workspaces (and up to 50,000 with
//     -large), with the seeding rate, unless the store holds more already;
//   - a flood of LTI 1.3 login initiations (-flood-logins, from
//     -flood-addresses client addresses) against a stack of its own whose
//     Redis has a fixed headroom, beside SDK logins;
//   - webhook delivery (-webhook-workspaces, -webhook-rate) on stacks of
//     its own delivering to a receiver in this process: the events' delay
//     from a change's answer, duplicates, the CPU a delivery costs, the
//     same changes with and without webhooks alternating, and two
//     workspace-service replicas sharing the deliveries.
//
// Usage:
//
//	go run ./deploy/local/cmd/bench [-round 10s] [-rounds 2] [-conns 64] [-limits=false] [-large] [-store-steps 50,100,250,…] [-flood-logins 100000] [-flood-addresses 1000] [-webhook-workspaces 25] [-webhook-rate 5]
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/liveproctor/workspaces/deploy/local/stack"
)

// config is what the flags set.
type config struct {
	Round       time.Duration // length of one measured run
	Rounds      int           // rounds of each comparison (login: A B C)
	Warmup      time.Duration // unmeasured load before each comparison
	Conns       int           // concurrent callers of the loaded runs
	SeedWorkers int           // concurrent creators while seeding
	Large       bool          // also seed and list up to 50,000 workspaces
	OutDir      string        // where results go; empty: <repo>/bench
	Verbose     bool          // copy the servers' output to stderr
	Only        scenarioSet   // the scenarios to run; empty: all
	ProfileDir  string        // where CPU profiles go; empty: none taken
	Limits      bool          // run the stack with its rate limits on
	StoreSteps  steps         // the store-scale scenario's numbers of workspaces
	StoreCalls  int           // calls per operation and step of the store-scale scenario
	// FloodLogins and FloodAddresses are the ltiflood scenario's login
	// initiations and the client addresses they come from.
	FloodLogins, FloodAddresses int
	// HookWorkspaces and HookRate are the webhooks scenario's workspaces
	// of each side and changes a second.
	HookWorkspaces, HookRate int
}

func parseFlags() config {
	var c config
	flag.DurationVar(&c.Round, "round", 10*time.Second, "length of one measured run")
	flag.IntVar(&c.Rounds, "rounds", 2, "rounds of each comparison (login: reference, floor, then stack)")
	flag.DurationVar(&c.Warmup, "warmup", 2*time.Second, "unmeasured load before each measurement")
	flag.IntVar(&c.Conns, "conns", 64, "concurrent callers of the loaded runs")
	flag.IntVar(&c.SeedWorkers, "seed-workers", defaultSeedWorkers, "concurrent creators while seeding workspaces")
	flag.BoolVar(&c.Large, "large", false, "also seed and list 10,000, 25,000 and 50,000 workspaces (slow on the embedded store)")
	flag.StringVar(&c.OutDir, "out", "", "folder for the results (default: bench/ at the repository root)")
	flag.BoolVar(&c.Verbose, "v", false, "copy the servers' output to stderr")
	flag.Var(&c.Only, "only", "run only these scenarios, comma-separated: "+strings.Join(scenarioNames(), ","))
	flag.StringVar(&c.ProfileDir, "profile", "", "take CPU, mutex, block, allocation and heap profiles and execution traces of the services during the stack's first login and REST rounds, into this folder")
	flag.BoolVar(&c.Limits, "limits", true, "keep the services' rate limits on (with a rate the load stays under); false: RATE_LIMIT=0 and no failure limits")
	c.StoreSteps = slices.Clone(defaultStoreSteps)
	flag.Var(&c.StoreSteps, "store-steps", "numbers of workspaces the store-scale scenario measures at, ascending (it stops once every operation is past its threshold)")
	flag.IntVar(&c.StoreCalls, "store-calls", 30, "calls of each operation at each store-scale step (fewer when they outlast -round)")
	flag.IntVar(&c.FloodLogins, "flood-logins", 100000, "LTI 1.3 login initiations of the ltiflood scenario")
	flag.IntVar(&c.FloodAddresses, "flood-addresses", 1000, "client addresses (X-Forwarded-For) the ltiflood scenario's initiations come from")
	flag.IntVar(&c.HookWorkspaces, "webhook-workspaces", 25, "workspaces with a webhook each, and as many without, of the webhooks scenario (on the embedded store every change reads them all: with many, the store's scans, not delivery, make the figures)")
	flag.IntVar(&c.HookRate, "webhook-rate", 5, "changes a second of the webhooks scenario")
	flag.Parse()
	return c
}

func main() {
	cfg := parseFlags()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, cfg); err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, cfg config) error {
	started := time.Now()
	root, err := stack.RepoRoot()
	if err != nil {
		return err
	}
	// A partial run prints its figures but must not replace the full
	// results, unless it was told where to write.
	writeFiles := len(cfg.Only) == 0 || cfg.OutDir != ""
	if cfg.OutDir == "" {
		cfg.OutDir = filepath.Join(root, "bench")
	}
	tmp, err := os.MkdirTemp("", "bench-")
	if err != nil {
		return fmt.Errorf("make a temporary folder: %w", err)
	}
	defer os.RemoveAll(tmp)

	env, err := startEnv(ctx, cfg, root, tmp)
	if err != nil {
		return err
	}
	rep, runErr := measureAll(ctx, cfg, env)
	if closeErr := env.Close(); closeErr != nil {
		fmt.Fprintln(os.Stderr, "bench: stopping the servers:", closeErr)
	}
	if runErr != nil {
		env.printLogTail(os.Stderr, 40)
		return runErr
	}
	rep.Took = time.Since(started)

	md := rep.Markdown()
	fmt.Print(md)
	var failed error
	if len(rep.Failed) > 0 {
		env.printLogTail(os.Stderr, 40)
		failed = fmt.Errorf("%d scenario(s) failed: %s", len(rep.Failed), strings.Join(rep.Failed, "; "))
	}
	if !writeFiles {
		return failed
	}
	path, err := writeResults(cfg.OutDir, md)
	if err != nil {
		return err
	}
	fmt.Fprintf(os.Stderr, "\nwrote %s\n", path)
	return failed
}

// writeResults writes latest.md into dir. Earlier runs are in its git
// history, and their figures in CHANGELOG.md (bench/README.md).
func writeResults(dir, md string) (string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", fmt.Errorf("make %s: %w", dir, err)
	}
	path := filepath.Join(dir, "latest.md")
	if err := os.WriteFile(path, []byte(md), 0o644); err != nil {
		return "", fmt.Errorf("write results: %w", err)
	}
	return path, nil
}
