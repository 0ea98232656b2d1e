package breaker_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/liveproctor/workspaces/pkg/breaker"
	"github.com/liveproctor/workspaces/pkg/fault"
)

// clock is a time the test moves.
type clock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *clock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.now }
func (c *clock) advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

var (
	errDown     = fault.New(fault.Unavailable, "store down")
	errNotFound = fault.New(fault.NotFound, "no such thing")
	settings    = breaker.Settings{Interval: 5 * time.Second, RetryInterval: 250 * time.Millisecond, ProbeTimeout: time.Second, SuspectAfter: time.Hour}
)

func newBreaker(s breaker.Settings) (*breaker.Breaker, *clock) {
	c := &clock{now: time.Date(2026, 11, 23, 8, 0, 0, 0, time.UTC)}
	return breaker.New(s, breaker.WithClock(c.Now)), c
}

func ok(context.Context) error { return nil }

// changes records the breaker's state changes.
type changes struct{ got []bool }

func (c *changes) record(open bool, _ error) { c.got = append(c.got, open) }

func TestProbesOpenAndClose(t *testing.T) {
	b, _ := newBreaker(settings)
	ctx := context.Background()
	var ch changes
	probe := func(err error) { b.Probe(ctx, func(context.Context) error { return err }, ch.record) }

	if err := b.Do(ctx, ok); err != nil {
		t.Fatalf("Do on a new breaker: %v", err)
	}
	probe(errDown)
	if err := b.Err(); !errors.Is(err, breaker.ErrOpen) || !errors.Is(err, errDown) {
		t.Fatalf("Err after a failed probe = %v, want ErrOpen and the probe's error", err)
	}
	called := false
	if err := b.Do(ctx, func(context.Context) error { called = true; return nil }); !errors.Is(err, breaker.ErrOpen) || called {
		t.Fatalf("Do while open = %v (called %v), want ErrOpen without calling", err, called)
	}
	probe(errDown) // still open: no change to report
	probe(nil)
	if err := b.Err(); err != nil {
		t.Fatalf("Err after a successful probe = %v", err)
	}
	if err := b.Do(ctx, ok); err != nil {
		t.Fatalf("Do once closed again: %v", err)
	}
	if want := []bool{true, false}; !equal(ch.got, want) {
		t.Fatalf("changes %v, want %v", ch.got, want)
	}
}

func equal(a, b []bool) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// Opening ends the calls in flight at once, with ErrOpen, instead of
// letting each wait for its own timeout.
func TestOpeningEndsCallsInFlight(t *testing.T) {
	b, _ := newBreaker(settings)
	started := make(chan struct{})
	result := make(chan error)
	go func() {
		result <- b.Do(context.Background(), func(ctx context.Context) error {
			close(started)
			<-ctx.Done() // a store that hangs
			return ctx.Err()
		})
	}()
	<-started
	b.Probe(context.Background(), func(context.Context) error { return errDown }, nil)
	select {
	case err := <-result:
		if !errors.Is(err, breaker.ErrOpen) {
			t.Fatalf("the call in flight ended with %v, want ErrOpen", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the call in flight still waits after the breaker opened")
	}
}

// The caller's own cancellation is the caller's: it asks for no probe.
func TestCallerCancellationIsNotAnOutage(t *testing.T) {
	b, _ := newBreaker(settings)
	b.Probe(context.Background(), ok, nil)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	err := b.Do(ctx, func(ctx context.Context) error { return fault.Wrap(fault.Unavailable, ctx.Err(), "canceled") })
	if fault.KindOf(err) != fault.Unavailable || errors.Is(err, breaker.ErrOpen) {
		t.Fatalf("Do = %v, want the call's own error", err)
	}
	if b.Due() {
		t.Fatal("a canceled call asked for a probe")
	}
}

func TestProbeSchedule(t *testing.T) {
	b, c := newBreaker(settings)
	ctx := context.Background()
	if !b.Due() {
		t.Fatal("the first probe is not due at once")
	}
	b.Probe(ctx, ok, nil)
	steps := []struct {
		what string
		do   func()
		due  bool
	}{
		{"just probed", func() {}, false},
		{"closed, before Interval", func() { c.advance(4 * time.Second) }, false},
		{"closed, at Interval", func() { c.advance(time.Second) }, true},
		{"probed", func() { b.Probe(ctx, ok, nil) }, false},
		{"a call failed as unreachable", func() { _ = b.Do(ctx, func(context.Context) error { return errDown }) }, true},
		{"probed, found it down", func() { b.Probe(ctx, func(context.Context) error { return errDown }, nil) }, false},
		{"open, before RetryInterval", func() { c.advance(200 * time.Millisecond) }, false},
		{"open, at RetryInterval", func() { c.advance(50 * time.Millisecond) }, true},
		{"probed, found it back", func() { b.Probe(ctx, ok, nil) }, false},
		{"a call failed for another reason", func() { _ = b.Do(ctx, func(context.Context) error { return errNotFound }) }, false},
		{"closed, RetryInterval later", func() { c.advance(250 * time.Millisecond) }, false},
	}
	for _, s := range steps {
		s.do()
		if got := b.Due(); got != s.due {
			t.Fatalf("%s: Due = %v, want %v", s.what, got, s.due)
		}
	}
}

// A call that waits longer than SuspectAfter asks for a probe while it
// still waits: that probe tells a slow store from one that hangs. It asks
// once: the probe answers it.
func TestSlowCallAsksForAProbe(t *testing.T) {
	s := settings
	s.SuspectAfter = 250 * time.Millisecond
	b, c := newBreaker(s)
	ctx := context.Background()
	b.Probe(ctx, ok, nil)
	started, release := make(chan struct{}), make(chan struct{})
	done := make(chan error)
	go func() {
		done <- b.Do(ctx, func(context.Context) error { close(started); <-release; return nil })
	}()
	<-started
	c.advance(s.SuspectAfter - time.Millisecond)
	if b.Due() {
		t.Fatal("a call asked for a probe before SuspectAfter")
	}
	c.advance(time.Millisecond)
	if !b.Due() {
		t.Fatal("a call waiting past SuspectAfter asked for no probe")
	}
	b.Probe(ctx, ok, nil)
	c.advance(time.Second)
	if b.Due() {
		t.Fatal("a slow call asked again after a probe answered it")
	}
	close(release)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

// Run reports the first probe's result, then every change.
func TestRunReportsState(t *testing.T) {
	b := breaker.New(breaker.Settings{Interval: time.Millisecond, RetryInterval: time.Millisecond, ProbeTimeout: time.Second, SuspectAfter: time.Hour})
	answers := []error{nil, nil, errDown, errDown, nil}
	reports := make(chan bool, len(answers))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var mu sync.Mutex
	go b.Run(ctx, func(context.Context) error {
		mu.Lock()
		defer mu.Unlock()
		if len(answers) == 0 {
			return nil
		}
		err := answers[0]
		answers = answers[1:]
		return err
	}, func(open bool, _ error) { reports <- open })
	for _, want := range []bool{false, true, false} {
		select {
		case got := <-reports:
			if got != want {
				t.Fatalf("reported open=%v, want %v", got, want)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("no report (want open=%v)", want)
		}
	}
}

// A probe that times out while calls still get answers finds a slow store,
// not a dead one: the breaker stays closed.
func TestFailedProbeWhileCallsSucceedKeepsItClosed(t *testing.T) {
	b, _ := newBreaker(settings)
	ctx := context.Background()
	b.Probe(ctx, func(ctx context.Context) error {
		if err := b.Do(context.Background(), ok); err != nil { // a call answered during the probe
			t.Fatal(err)
		}
		return errDown
	}, nil)
	if err := b.Err(); err != nil {
		t.Fatalf("Err = %v after a failed probe during which a call succeeded", err)
	}
	b.Probe(ctx, func(context.Context) error { return errDown }, nil)
	if err := b.Err(); !errors.Is(err, breaker.ErrOpen) {
		t.Fatalf("Err = %v after a failed probe with no success meanwhile", err)
	}
}
