// Package claimloop runs work that every replica takes from a shared store
// by claiming it under a lease: claim what is due, hand each claim to a
// worker of its own, at most a bound at once, and look again after a
// poll while nothing is due. What a claim is, how long its lease runs and
// how it is settled stay the caller's; the loop only claims, hands out
// and, when it stops, waits for its workers.
//
// The webhooks' dispatcher and the LTI scores' delivery both run one. They
// are two contexts of the workspace service whose rings may not import
// each other, so the loop is a library in pkg/ that imports only the
// standard library, which any ring may use, rather than a package of
// either context's (or a third room inside the service that both would
// then depend on).
package claimloop

import (
	"context"
	"sync"
	"time"
)

// Option tunes Run.
type Option func(*config)

type config struct {
	graceful bool
	grace    time.Duration
}

// StopGrace lets the work in flight when Run's context ends go on for
// grace: work then runs on a context of its own, which keeps the values
// of Run's but not its end, and which is cancelled grace after it (zero:
// at once, once the loop has stopped claiming). Without it, work runs on
// Run's context and ends with it.
func StopGrace(grace time.Duration) Option {
	return func(c *config) { c.graceful, c.grace = true, grace }
}

// Run claims with claim and hands each claimed item to work on a goroutine
// of its own, at most workers (at least 1) at once, until ctx ends: it
// claims again at once while claim returns an item, and after poll (over
// 0) when it returns none. claim reports its own failures; one is no item,
// so the loop looks again after poll. Run returns once all the work it
// started has returned.
func Run[T any](ctx context.Context, workers int, poll time.Duration,
	claim func(ctx context.Context) (T, bool), work func(ctx context.Context, item T), opts ...Option) {
	var c config
	for _, o := range opts {
		o(&c)
	}
	var inFlight sync.WaitGroup
	workCtx := ctx
	if c.graceful {
		var abandon context.CancelFunc
		workCtx, abandon = context.WithCancel(context.WithoutCancel(ctx))
		defer func() {
			stop := time.AfterFunc(c.grace, abandon)
			inFlight.Wait()
			stop.Stop()
			abandon()
		}()
	} else {
		defer inFlight.Wait()
	}
	slots := make(chan struct{}, max(workers, 1))
	tick := time.NewTicker(poll)
	defer tick.Stop()
	for {
		claimDue(ctx, workCtx, &inFlight, slots, claim, work)
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
}

// claimDue claims while claim finds items, each handed to work on
// workCtx once one of slots is free.
func claimDue[T any](ctx, workCtx context.Context, inFlight *sync.WaitGroup, slots chan struct{},
	claim func(context.Context) (T, bool), work func(context.Context, T)) {
	for {
		select {
		case slots <- struct{}{}:
		case <-ctx.Done():
			return
		}
		item, ok := claim(ctx)
		if !ok {
			<-slots
			return
		}
		inFlight.Go(func() {
			defer func() { <-slots }()
			work(workCtx, item)
		})
	}
}
