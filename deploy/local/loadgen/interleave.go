package loadgen

import (
	"context"
	"fmt"
	"sync"
	"time"
)

// Interleave drives two operations from the same workers, call by call, in
// the order A B B A A B B A…, and returns each one's result. Comparing two
// ways of doing the same thing this way exposes both to the same moment of
// a noisy machine, which alternating whole rounds does not: the difference
// of their medians is then far steadier than either median.
//
// Each result's Elapsed is the run's wall time, so its RPS is the rate of
// that operation within the mixed load.
func Interleave(ctx context.Context, opts Options, a, b Op) (ra, rb *Result, err error) {
	start := time.Now()
	l, err := newLimits(opts, start)
	if err != nil {
		return nil, nil, err
	}
	workers := max(opts.Workers, 1)
	parts := make([][2]worker, workers)
	var wg sync.WaitGroup
	for i := range parts {
		w := &parts[i]
		wg.Go(func() {
			ops := [2]Op{a, b}
			// Call n of A B B A A B B A…: A where n%4 is 0 or 3.
			for n := 0; l.next(ctx); n++ {
				k := 0
				if n%4 == 1 || n%4 == 2 {
					k = 1
				}
				if !w[k].call(ctx, ops[k]) {
					return
				}
			}
		})
	}
	wg.Wait()
	elapsed := time.Since(start)
	as, bs := make([]worker, workers), make([]worker, workers)
	for i, p := range parts {
		as[i], bs[i] = p[0], p[1]
	}
	ra, rb = merge(as, elapsed), merge(bs, elapsed)
	if err := ctx.Err(); err != nil {
		return ra, rb, fmt.Errorf("load run stopped early: %w", err)
	}
	return ra, rb, nil
}
