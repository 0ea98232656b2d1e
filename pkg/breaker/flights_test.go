package breaker_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/liveproctor/workspaces/pkg/breaker"
)

// Run starts a probe for a call that hangs, without waiting for Interval.
func TestRunProbesForAHangingCall(t *testing.T) {
	s := settings
	s.SuspectAfter = time.Millisecond
	b := breaker.New(s)
	probes := make(chan struct{}, 1)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go b.Run(ctx, func(context.Context) error { probes <- struct{}{}; return nil }, nil)
	<-probes // the first, at once
	release := make(chan struct{})
	done := make(chan error)
	go func() { done <- b.Do(ctx, func(context.Context) error { <-release; return nil }) }()
	select {
	case <-probes:
	case <-time.After(10 * time.Second):
		t.Fatal("no probe for a call hanging past SuspectAfter")
	}
	close(release)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

// Calls starting while the breaker opens are each refused or ended: none
// is left waiting on a store the breaker has given up on.
func TestOpeningRacesWithCalls(t *testing.T) {
	b, _ := newBreaker(settings)
	const calls = 64
	start := make(chan struct{})
	results := make(chan error, calls)
	for range calls {
		go func() {
			<-start
			results <- b.Do(context.Background(), func(ctx context.Context) error {
				<-ctx.Done() // a store that hangs
				return context.Cause(ctx)
			})
		}()
	}
	close(start)
	b.Probe(context.Background(), func(context.Context) error { return errDown }, nil)
	for range calls {
		select {
		case err := <-results:
			if !errors.Is(err, breaker.ErrOpen) {
				t.Fatalf("a call ended with %v, want ErrOpen", err)
			}
		case <-time.After(10 * time.Second):
			t.Fatal("a call still waits after the breaker opened")
		}
	}
}

// A call ended by opening sees ErrOpen as its context's cause.
func TestOpeningCancelsWithErrOpen(t *testing.T) {
	b, _ := newBreaker(settings)
	started := make(chan struct{})
	cause := make(chan error, 1)
	done := make(chan error)
	go func() {
		done <- b.Do(context.Background(), func(ctx context.Context) error {
			close(started)
			<-ctx.Done()
			cause <- context.Cause(ctx)
			return ctx.Err()
		})
	}()
	<-started
	b.Probe(context.Background(), func(context.Context) error { return errDown }, nil)
	if err := <-cause; !errors.Is(err, breaker.ErrOpen) {
		t.Fatalf("the call's context ended with cause %v, want ErrOpen", err)
	}
	if err := <-done; !errors.Is(err, breaker.ErrOpen) {
		t.Fatalf("Do = %v, want ErrOpen", err)
	}
}

// A probe's own calls reach the store while the breaker is open.
func TestProbeCallsBypassTheBreaker(t *testing.T) {
	b, _ := newBreaker(settings)
	ctx := context.Background()
	b.Probe(ctx, func(context.Context) error { return errDown }, nil)
	called := false
	b.Probe(ctx, func(ctx context.Context) error {
		return b.Do(ctx, func(context.Context) error { called = true; return nil })
	}, nil)
	if !called {
		t.Fatal("the probe's call did not reach the store")
	}
	if err := b.Err(); err != nil {
		t.Fatalf("Err = %v after a probe whose call succeeded", err)
	}
}

// A call that panics leaves the calls in flight: it cannot ask for a probe
// later.
func TestPanickingCallLeaves(t *testing.T) {
	s := settings
	s.SuspectAfter = 250 * time.Millisecond
	b, c := newBreaker(s)
	ctx := context.Background()
	b.Probe(ctx, ok, nil)
	func() {
		defer func() { _ = recover() }()
		_ = b.Do(ctx, func(context.Context) error { panic("the call's bug") })
	}()
	c.advance(time.Second)
	if b.Due() {
		t.Fatal("a call that panicked still counts as in flight")
	}
}

// Calls from many goroutines while probes open and close the breaker, for
// the race detector: each call succeeds or is refused.
func TestConcurrentCallsAndProbes(t *testing.T) {
	b, _ := newBreaker(settings)
	ctx := context.Background()
	var wg sync.WaitGroup
	stop := make(chan struct{})
	for range 8 {
		wg.Go(func() {
			for {
				select {
				case <-stop:
					return
				default:
				}
				err := b.Do(ctx, ok)
				if err != nil && !errors.Is(err, breaker.ErrOpen) {
					t.Errorf("Do = %v", err)
					return
				}
			}
		})
	}
	for i := range 200 {
		var err error
		if i%2 == 0 {
			err = errDown
		}
		b.Probe(ctx, func(context.Context) error { return err }, nil)
		_ = b.Due()
	}
	close(stop)
	wg.Wait()
}
