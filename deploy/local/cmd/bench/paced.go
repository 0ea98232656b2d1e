package main

import (
	"cmp"
	"context"
	"errors"
	"slices"
	"sync"
	"time"

	"github.com/liveproctor/workspaces/deploy/local/loadgen"
)

// pacedRun is one stretch of calls started at a steady rate.
type pacedRun struct {
	*loadgen.Result
	Failures map[int]int // by HTTP status; 0: no answer
}

// pacedCalls starts op rate times a second until pace ends, each call on
// its own goroutine (a slow answer does not hold back the next) under ctx,
// and waits for the calls in flight.
func pacedCalls(pace, ctx context.Context, rate int, op loadgen.Op) pacedRun {
	var (
		mu  sync.Mutex
		out = pacedRun{Result: &loadgen.Result{}, Failures: map[int]int{}}
		wg  sync.WaitGroup
	)
	tick := time.NewTicker(time.Second / time.Duration(rate))
	defer tick.Stop()
	start := time.Now()
	for pace.Err() == nil {
		select {
		case <-pace.Done():
		case <-tick.C:
			wg.Go(func() {
				t0 := time.Now()
				err := op(ctx)
				took := time.Since(t0)
				mu.Lock()
				defer mu.Unlock()
				out.Latencies = append(out.Latencies, took)
				if err != nil {
					out.Errors++
					out.FirstError = cmp.Or(out.FirstError, err)
					var status *loadgen.StatusError
					if errors.As(err, &status) {
						out.Failures[status.Status]++
					} else {
						out.Failures[0]++
					}
				}
			})
		}
	}
	wg.Wait()
	out.Elapsed = time.Since(start)
	out.Requests = len(out.Latencies)
	slices.Sort(out.Latencies)
	return out
}
