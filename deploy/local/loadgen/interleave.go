package loadgen

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"
)

// Interleave drives several operations from the same workers, taking turns
// every opts.Block calls (every call by default), in an order that runs
// forward, then backward (A B B A A B B A… for two, A B C C B A A B C… for
// three), and returns each one's result in the order given. Comparing ways
// of doing the same thing this way exposes all of them to the same moments
// of a noisy machine, which alternating whole rounds does not: the
// difference of their medians is then far steadier than any one median.
// Going back and forth gives each operation every other one as its
// neighbour equally often.
//
// Each result's Elapsed is the run's wall time, so its RPS is the rate of
// that operation within the mixed load.
func Interleave(ctx context.Context, opts Options, ops ...Op) ([]*Result, error) {
	if len(ops) == 0 {
		return nil, errors.New("interleave: no operations")
	}
	start := time.Now()
	l, err := newLimits(opts, start)
	if err != nil {
		return nil, err
	}
	n := len(ops)
	parts := make([][]worker, max(opts.Workers, 1))
	var wg sync.WaitGroup
	for i := range parts {
		parts[i] = make([]worker, n)
		w := parts[i]
		wg.Go(func() {
			block := max(opts.Block, 1)
			for call := 0; l.next(ctx); call++ {
				turn := call / block
				k := turn % n
				if (turn/n)%2 == 1 {
					k = n - 1 - k
				}
				if !w[k].call(ctx, ops[k]) {
					return
				}
			}
		})
	}
	wg.Wait()
	elapsed := time.Since(start)
	results := make([]*Result, n)
	for k := range results {
		byOp := make([]worker, len(parts))
		for i, p := range parts {
			byOp[i] = p[k]
		}
		results[k] = merge(byOp, elapsed)
	}
	if err := ctx.Err(); err != nil {
		return results, fmt.Errorf("load run stopped early: %w", err)
	}
	return results, nil
}
