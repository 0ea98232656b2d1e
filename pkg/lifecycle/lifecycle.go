// Package lifecycle is what every binary's main does around its own work:
// its configuration, a logger, the garbage collector's target, traces,
// optional profiling, a context that ends on SIGINT or SIGTERM, and an exit
// status.
package lifecycle

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"runtime/debug"
	"syscall"

	"github.com/liveproctor/workspaces/pkg/envconfig"
	"github.com/liveproctor/workspaces/pkg/telemetry"
)

// Config is a binary's configuration: whatever else it holds, it holds the
// telemetry settings Main applies before it runs the binary.
type Config interface {
	TelemetrySettings() telemetry.Settings
}

// Main reads the named component's configuration from the environment with
// load, runs run with it, and exits: 0 when run returns nil, 1 (after
// logging why) when the configuration is malformed or run fails. The
// context run receives ends on SIGINT or SIGTERM; run should then stop
// gracefully and return.
func Main[C Config](component string, load func(*envconfig.Reader) (C, error), run func(context.Context, C, *slog.Logger) error) {
	cfg, err := load(envconfig.New())
	if err != nil {
		// LOG_LEVEL may be what is malformed: report at the default level.
		logger, flushLogs := telemetry.NewLogger(component, slog.LevelInfo)
		fail(component, logger, flushLogs, fmt.Errorf("configuration: %w", err))
	}
	settings := cfg.TelemetrySettings()
	logger, flushLogs := telemetry.NewLogger(component, settings.LogLevel)
	if err := start(component, settings, logger, func(ctx context.Context) error { return run(ctx, cfg, logger) }); err != nil {
		fail(component, logger, flushLogs, err)
	}
	flushLogs()
}

// fail logs why the component stopped and exits with status 1.
func fail(component string, logger *slog.Logger, flushLogs func(), err error) {
	logger.Error(component+" stopped", "error", err.Error())
	flushLogs()
	os.Exit(1)
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

func start(component string, settings telemetry.Settings, logger *slog.Logger, run func(context.Context) error) error {
	tuneGC()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	stopTracing, err := telemetry.StartTracing(ctx, component, settings.ExportTraces)
	if err != nil {
		return fmt.Errorf("tracing: %w", err)
	}
	defer stopTracing(context.Background())
	if err := telemetry.ServePprof(settings.PprofAddr, logger); err != nil {
		return fmt.Errorf("PPROF_ADDR: %w", err)
	}
	return run(ctx)
}
