package app

import (
	"context"
	"sync"
	"time"
)

// RunBackground does the application's background work until ctx ends:
// it writes key pairs' uses and, every sweepEvery, removes expired key
// pairs. Every replica runs it; the sweep's writes are revision-checked,
// so replicas sweeping the same workspace do not clash.
func (a *App) RunBackground(ctx context.Context, sweepEvery time.Duration) {
	var wg sync.WaitGroup
	wg.Add(2)
	go func() {
		defer wg.Done()
		a.writeKeyUses(ctx)
	}()
	go func() {
		defer wg.Done()
		ticker := time.NewTicker(sweepEvery)
		defer ticker.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-ticker.C:
				if _, err := a.SweepExpiredKeys(ctx); err != nil && ctx.Err() == nil {
					a.logger.Warn("sweeping expired key pairs failed", "error", err.Error())
				}
			}
		}
	}()
	wg.Wait()
}
