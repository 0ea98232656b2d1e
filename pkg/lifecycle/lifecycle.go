// Package lifecycle is what every binary's main does around its own work:
// a logger, the garbage collector's target, traces, optional profiling, a
// context that ends on SIGINT or SIGTERM, and an exit status.
package lifecycle

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"runtime/debug"
	"syscall"

	"github.com/liveproctor/workspaces/pkg/telemetry"
)

// Main runs run for the named component and exits: 0 when it returns nil,
// 1 (after logging why) when it fails, 2 when LOG_LEVEL is malformed. The
// context run receives ends on SIGINT or SIGTERM; run should then stop
// gracefully and return.
func Main(component string, run func(ctx context.Context, logger *slog.Logger) error) {
	logger, flushLogs, err := telemetry.NewLogger(component)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	if err := start(component, logger, run); err != nil {
		logger.Error(component+" stopped", "error", err.Error())
		flushLogs()
		os.Exit(1)
	}
	flushLogs()
}

// defaultGCPercent is the garbage collector's target (GOGC) when the
// environment does not set one. Go's default, 100, collects whenever the
// heap doubles; the services keep only a few MiB live, so at that setting
// they collected many times a second under load, and the collector took a
// tenth of the gateway's CPU. At 400 the login benchmark's throughput rose
// by about a sixth while the resident set stayed near 40 MiB (bench/). A
// memory limit (GOMEMLIMIT, set from the container's limit in deploy/)
// makes the collector work harder as the heap nears it, so a large heap
// target cannot run a pod out of memory.
const defaultGCPercent = 400

// tuneGC sets the garbage collector's target to defaultGCPercent unless
// GOGC is set, which the runtime has already applied.
func tuneGC() {
	if _, set := os.LookupEnv("GOGC"); !set {
		debug.SetGCPercent(defaultGCPercent)
	}
}

func start(component string, logger *slog.Logger, run func(context.Context, *slog.Logger) error) error {
	tuneGC()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	stopTracing, err := telemetry.StartTracing(ctx, component)
	if err != nil {
		return fmt.Errorf("tracing: %w", err)
	}
	defer stopTracing(context.Background())
	if err := telemetry.ServePprof(logger); err != nil {
		return fmt.Errorf("PPROF_ADDR: %w", err)
	}
	return run(ctx, logger)
}
