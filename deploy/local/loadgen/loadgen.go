// Package loadgen is a small closed-loop load generator: a fixed number of
// workers call the same operation back to back for a fixed duration, and
// every call's latency and outcome is recorded.
//
// Run drives any func(ctx) error, so gRPC calls are driven exactly like
// HTTP requests; HTTPRequest adapts an HTTP request to that shape.
package loadgen

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"
)

// Options says how hard and how long to drive an operation.
type Options struct {
	// Workers is the number of concurrent callers; below 1 means 1.
	Workers int
	// Duration is how long workers start new calls. A call in flight when
	// it ends is finished and counted. Zero means no time limit, which
	// needs Calls.
	Duration time.Duration
	// Calls, when positive, stops the run after that many calls in all
	// (say, to create exactly N records).
	Calls int
	// Block is, for Interleave, how many calls of one operation a worker
	// makes in a row before turning to the next; below 1 means 1.
	Block int
}

// Op is one call under load. A non-nil error counts as a failed call.
type Op func(ctx context.Context) error

// Run calls op from opts.Workers goroutines until opts.Duration has passed,
// opts.Calls calls were made or ctx is done, and returns what it saw. It
// returns ctx's error when ctx ended the run early.
func Run(ctx context.Context, opts Options, op Op) (*Result, error) {
	start := time.Now()
	l, err := newLimits(opts, start)
	if err != nil {
		return nil, err
	}
	parts := make([]worker, max(opts.Workers, 1))
	var wg sync.WaitGroup
	for i := range parts {
		w := &parts[i]
		wg.Go(func() { w.loop(ctx, l, op) })
	}
	wg.Wait()
	res := merge(parts, time.Since(start))
	if err := ctx.Err(); err != nil {
		return res, fmt.Errorf("load run stopped early: %w", err)
	}
	return res, nil
}

// worker is one caller's record; each worker writes only its own.
type worker struct {
	latencies []time.Duration
	errors    int
	firstErr  error
}

// limits are when workers stop starting calls.
type limits struct {
	deadline time.Time // zero: none
	calls    int64     // zero: none
	started  atomic.Int64
}

// newLimits returns the limits opts set for a run starting at start.
func newLimits(opts Options, start time.Time) (*limits, error) {
	if opts.Duration <= 0 && opts.Calls <= 0 {
		return nil, errors.New("load run without a duration or a number of calls")
	}
	l := &limits{calls: int64(opts.Calls)}
	if opts.Duration > 0 {
		l.deadline = start.Add(opts.Duration)
	}
	return l, nil
}

// next claims the right to start one more call.
func (l *limits) next(ctx context.Context) bool {
	if ctx.Err() != nil || (!l.deadline.IsZero() && !time.Now().Before(l.deadline)) {
		return false
	}
	return l.calls <= 0 || l.started.Add(1) <= l.calls
}

func (w *worker) loop(ctx context.Context, l *limits, op Op) {
	for l.next(ctx) {
		if !w.call(ctx, op) {
			return
		}
	}
}

// call makes one call and records it. It returns false when the caller
// cancelled the run during the call, whose sample is then dropped: the call
// was cut short, not failed.
func (w *worker) call(ctx context.Context, op Op) bool {
	t0 := time.Now()
	err := op(ctx)
	elapsed := time.Since(t0)
	if err != nil && errors.Is(err, context.Canceled) && ctx.Err() != nil {
		return false
	}
	w.latencies = append(w.latencies, elapsed)
	if err != nil {
		w.errors++
		if w.firstErr == nil {
			w.firstErr = err
		}
	}
	return true
}
