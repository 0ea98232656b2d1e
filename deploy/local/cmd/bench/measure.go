package main

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/liveproctor/workspaces/deploy/local/loadgen"
)

// measurement is one measured run of one operation.
type measurement struct {
	Scenario string // what was called, e.g. "login, stack"
	Callers  int
	*loadgen.Result
	// CPU is what each process used during the run, when it was read.
	CPU []processCPU
	// Load is the machine's load average (1 minute) as the run began.
	Load float64
}

// warmUp drives op, unmeasured, for cfg.Warmup, and fails when not one
// call succeeded: a broken scenario should stop the run, not fill a table
// with errors.
func warmUp(ctx context.Context, cfg config, name string, callers int, op loadgen.Op) error {
	return warmUpSide(ctx, cfg, nil, callers, side{Name: name, Op: op})
}

// warmUpSide is warmUp for either kind of side.
func warmUpSide(ctx context.Context, cfg config, e *env, callers int, s side) error {
	if cfg.Warmup <= 0 {
		return nil
	}
	name := s.Name
	var res *loadgen.Result
	var err error
	if s.Wrk != nil {
		res, _, err = runWrk(ctx, e.tmp, *s.Wrk, callers, cfg.Warmup)
	} else {
		res, err = loadgen.Run(ctx, loadgen.Options{Workers: callers, Duration: cfg.Warmup}, s.Op)
	}
	if err != nil {
		return fmt.Errorf("warm up %s: %w", name, err)
	}
	if res.Requests > 0 && res.Errors == res.Requests {
		return fmt.Errorf("warm up %s: all %d calls failed, the first with: %w", name, res.Requests, res.FirstError)
	}
	return nil
}

// measure drives op with callers for one round and logs the outcome.
func measure(ctx context.Context, cfg config, name string, callers int, op loadgen.Op) (measurement, error) {
	return measureFor(ctx, loadgen.Options{Workers: callers, Duration: cfg.Round}, name, op)
}

// measureFor runs op with opts and logs the outcome.
func measureFor(ctx context.Context, opts loadgen.Options, name string, op loadgen.Op) (measurement, error) {
	res, err := loadgen.Run(ctx, opts, op)
	if err != nil {
		return measurement{}, fmt.Errorf("%s: %w", name, err)
	}
	progress("  %-40s %3d callers: %s", name, opts.Workers, res)
	return measurement{Scenario: name, Callers: opts.Workers, Result: res}, nil
}

// measureCalls drives op with one caller for calls calls or one round
// (cfg.Round), whichever ends first; a call in flight at the round's end is
// finished and counted, so a slow operation gets at least one. One call
// before them is not counted: it pays what the first call after a pause
// pays alone (the services' credential cache, 10 s, is refilled by a lookup
// that reads the whole collection on the embedded store), and stops a
// broken scenario. Only a 503, the store too slow for a deadline, lets the
// measurement go on: that is a figure, not a fault of the bench.
func measureCalls(ctx context.Context, cfg config, name string, calls int, op loadgen.Op) (measurement, error) {
	if err := op(ctx); err != nil {
		var status *loadgen.StatusError
		if !errors.As(err, &status) || status.Status != http.StatusServiceUnavailable {
			return measurement{}, fmt.Errorf("%s, the first call: %w", name, err)
		}
		progress("  %s: the first call answered 503; measuring anyway", name)
	}
	load := loadAverage()
	m, err := measureFor(ctx, loadgen.Options{Workers: 1, Calls: calls, Duration: cfg.Round}, name, op)
	m.Load = load
	return m, err
}

// grpcOp adapts a gRPC call to the load generator: each call carries a
// 30 s deadline, like the HTTP client's timeout.
func grpcOp(call func(ctx context.Context) error) loadgen.Op {
	return func(ctx context.Context) error {
		ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
		defer cancel()
		return call(ctx)
	}
}

// alternate measures the sides in cfg.Rounds rounds of each in turn
// (A B A B…, or A B C A B C… with three), so that drift over the run
// (heat, a store growing) touches all alike, and returns each side's
// rounds, in the order of sides, with the CPU time every process used in
// each. before, when not nil, runs after the warm-up, just before the
// first measured round. With -profile, the services' CPU profiles are
// taken during the last side's first round.
func alternate(ctx context.Context, cfg config, e *env, callers int, sides []side, before func() error) ([][]measurement, error) {
	for _, s := range sides {
		if err := warmUpSide(ctx, cfg, e, callers, s); err != nil {
			return nil, err
		}
	}
	if before != nil {
		if err := before(); err != nil {
			return nil, err
		}
	}
	procs, err := e.cpuProcesses()
	if err != nil {
		return nil, err
	}
	got := make([][]measurement, len(sides))
	for i := range cfg.Rounds {
		for j, s := range sides {
			var profiling *profileCapture
			if j == len(sides)-1 && i == 0 {
				profiling = e.startProfiles(ctx, cfg, s.Name, callers)
			}
			meter, err := startCPU(procs)
			if err != nil {
				return nil, err
			}
			load := loadAverage()
			m, err := e.measureSide(ctx, cfg, fmt.Sprintf("%s (round %d)", s.Name, i+1), callers, s)
			if err != nil {
				return nil, err
			}
			m.Scenario = s.Name
			m.Load = load
			cpu, err := meter.stop()
			if err != nil {
				return nil, err
			}
			m.CPU = append(cpu, m.CPU...)
			if err := profiling.wait(); err != nil {
				return nil, err
			}
			got[j] = append(got[j], m)
		}
	}
	return got, nil
}

// side is one of the operations an alternation compares: driven by
// the Go load generator (Op) or by wrk (Wrk).
type side struct {
	Name string
	Op   loadgen.Op
	Wrk  *wrkLoad
}

// measureSide runs one round of s; a wrk round's CPU holds wrk's own.
func (e *env) measureSide(ctx context.Context, cfg config, name string, callers int, s side) (measurement, error) {
	if s.Wrk == nil {
		return measure(ctx, cfg, name, callers, s.Op)
	}
	res, used, err := runWrk(ctx, e.tmp, *s.Wrk, callers, cfg.Round)
	if err != nil {
		return measurement{}, fmt.Errorf("%s: %w", name, err)
	}
	progress("  %-40s %3d conns (wrk): %s", name, callers, res)
	return measurement{Scenario: name, Callers: callers, Result: res, CPU: []processCPU{{Name: "wrk", Used: used}}}, nil
}

// loadAverage reads the machine's load average over the last minute; 0
// when it cannot.
func loadAverage() float64 {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return 0
	}
	f, _ := strconv.ParseFloat(strings.Fields(string(b))[0], 64)
	return f
}

// pool combines the rounds of one operation at one concurrency, CPU time
// included.
func pool(rounds []measurement) measurement {
	if len(rounds) == 0 {
		return measurement{Result: &loadgen.Result{}}
	}
	rs := make([]*loadgen.Result, len(rounds))
	cpu := map[string]time.Duration{}
	var names []string
	for i, m := range rounds {
		rs[i] = m.Result
		for _, c := range m.CPU {
			if _, seen := cpu[c.Name]; !seen {
				names = append(names, c.Name)
			}
			cpu[c.Name] += c.Used
		}
	}
	pooled := measurement{Scenario: rounds[0].Scenario, Callers: rounds[0].Callers, Result: loadgen.Combine(rs...)}
	for _, m := range rounds {
		pooled.Load += m.Load / float64(len(rounds))
	}
	for _, n := range names {
		pooled.CPU = append(pooled.CPU, processCPU{Name: n, Used: cpu[n]})
	}
	return pooled
}
