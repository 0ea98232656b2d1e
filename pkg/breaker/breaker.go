// Package breaker lets a store adapter answer at once while its store is
// unreachable, instead of every call waiting for its own timeouts.
//
// A Breaker is closed (calls go to the store) or open (calls fail at once
// with ErrOpen). Only probes change it: a failed probe opens it, a
// successful one closes it. A probe that fails while calls still succeed
// counts as a success: the store is slow (a loaded machine), not gone. Run
// probes every Interval while the breaker is closed (this is also what
// health reports), every RetryInterval while it is open (so service resumes
// soon after the store returns), at once when a call fails as unreachable,
// and when a call has been waiting for SuspectAfter: a probe tells a store
// that is slow, which answers it, from one that is gone or hangs. Run looks
// at the calls in flight every 50 ms, so that probe starts within
// SuspectAfter + 50 ms of the call's start (while the call still waits; a
// call answered before Run looked asks for none: the store answered it).
// Opening ends the calls in flight (their context is cancelled with
// ErrOpen), so none of them waits for its own timeout either.
package breaker

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"time"

	"github.com/liveproctor/workspaces/pkg/fault"
)

// ErrOpen is the error of a call refused or ended because the store is
// unreachable.
var ErrOpen = errors.New("the store is unreachable (circuit open)")

// Settings says how often to probe and how long a call may wait before it
// makes the breaker probe.
type Settings struct {
	Interval      time.Duration // between probes while closed
	RetryInterval time.Duration // between probes while open
	ProbeTimeout  time.Duration // bound of one probe
	SuspectAfter  time.Duration // a call waiting this long asks for a probe
	// Unreachable reports whether a call's error may mean the store is
	// unreachable; nil means fault.KindOf(err) == fault.Unavailable.
	Unreachable func(error) bool
}

// Defaults are the settings both services use, with the store's own
// timeout as ProbeTimeout: a hang is noticed within about SuspectAfter +
// 50 ms + ProbeTimeout, and a store that is back is used again within
// RetryInterval + ProbeTimeout.
func Defaults(probeTimeout time.Duration) Settings {
	return Settings{Interval: 5 * time.Second, RetryInterval: 250 * time.Millisecond, ProbeTimeout: probeTimeout, SuspectAfter: 250 * time.Millisecond}
}

// probeKey marks a probe's context, whose calls Do lets through while open.
type probeKey struct{}

// tick is how often Run looks whether a probe is due.
const tick = 50 * time.Millisecond

// Breaker is safe for concurrent use.
type Breaker struct {
	settings Settings
	now      func() time.Time
	wake     chan struct{} // a probe was asked for
	// open is written under mu, read by Do without it and again under a
	// shard's lock as the call registers (see enter).
	open    atomic.Bool
	probing atomic.Int32 // probes running: only then may a context be a probe's
	flights              // the calls in flight

	mu       sync.Mutex
	cause    error     // the failed probe's error, while open
	probedAt time.Time // when the last probe started
	asked    uint64    // probes calls asked for
	answered uint64    // asked when the last probe started
}

// Option changes how New builds a Breaker.
type Option func(*Breaker)

// WithClock replaces time.Now, for tests.
func WithClock(now func() time.Time) Option { return func(b *Breaker) { b.now = now } }

// New returns a closed breaker; the first probe is due at once.
func New(s Settings, opts ...Option) *Breaker {
	if s.Unreachable == nil {
		s.Unreachable = func(err error) bool { return fault.KindOf(err) == fault.Unavailable }
	}
	b := &Breaker{settings: s, now: time.Now, wake: make(chan struct{}, 1)}
	for _, opt := range opts {
		opt(b)
	}
	b.flights.init()
	return b
}

// Err is nil while the breaker is closed, and ErrOpen (joined with the
// failed probe's error) while it is open.
func (b *Breaker) Err() error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.open.Load() {
		return errors.Join(ErrOpen, b.cause)
	}
	return nil
}

// Do runs call unless the breaker is open (then it returns ErrOpen at
// once). call's context also ends, with cause ErrOpen, when the breaker
// opens meanwhile, and Do then returns ErrOpen. A call that fails as
// unreachable asks for a probe at once; one still waiting SuspectAfter
// after it started asks for one, once, when Due next looks (Run asks Due
// every 50 ms). Calls with the context of a probe that is running go
// straight to the store, open or not.
func (b *Breaker) Do(ctx context.Context, call func(context.Context) error) error {
	if b.probing.Load() != 0 && ctx.Value(probeKey{}) == b {
		return call(ctx) // a probe's, which must reach the store
	}
	if b.open.Load() {
		return ErrOpen
	}
	callCtx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	f := b.enter(cancel)
	if f == nil {
		return ErrOpen // opened meanwhile
	}
	defer b.leave(f)
	err := call(callCtx)
	switch {
	case err == nil:
		f.ok = true
		return nil
	case ctx.Err() == nil && errors.Is(context.Cause(callCtx), ErrOpen):
		return ErrOpen
	case ctx.Err() == nil && b.settings.Unreachable(err):
		b.suspect()
	}
	return err
}

// suspect asks for a probe now.
func (b *Breaker) suspect() {
	b.mu.Lock()
	b.asked++
	b.mu.Unlock()
	select {
	case b.wake <- struct{}{}:
	default:
	}
}

// Due reports whether a probe should start now: none has run yet, a call
// asked for one since the last, a call in flight has been waiting for
// SuspectAfter and had not yet when the last started, or the last is
// Interval (closed) or RetryInterval (open) old. Run asks it every 50 ms;
// tests may too.
func (b *Breaker) Due() bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	now := b.now()
	if b.probedAt.IsZero() || b.asked != b.answered {
		return true
	}
	every := b.settings.Interval
	if b.open.Load() {
		every = b.settings.RetryInterval
	}
	return !now.Before(b.probedAt.Add(every)) || b.waitedSince(b.probedAt, now)
}

// Probe runs check once, bounded by ProbeTimeout, opens or closes the
// breaker by its result, and calls changed when that changes the state.
// check's calls through Do reach the store even while the breaker is open.
// Run calls it; tests may too.
func (b *Breaker) Probe(ctx context.Context, check func(context.Context) error, changed func(open bool, cause error)) {
	b.mu.Lock()
	b.probedAt, b.answered = b.now(), b.asked
	b.mu.Unlock()
	succeeded := b.succeeded()
	err := b.check(ctx, check)
	if ctx.Err() != nil {
		return
	}
	if err != nil && b.succeeded() != succeeded {
		err = nil // calls got answers meanwhile: slow, not down
	}
	b.mu.Lock()
	was, open := b.open.Load(), err != nil
	b.open.Store(open)
	b.cause = err
	if open && !was {
		b.endAll(ErrOpen)
	}
	b.mu.Unlock()
	if open != was && changed != nil {
		changed(open, err)
	}
}

// check runs check with a probe's context, which Do lets through.
func (b *Breaker) check(ctx context.Context, check func(context.Context) error) error {
	b.probing.Add(1)
	defer b.probing.Add(-1)
	probeCtx, cancel := context.WithTimeout(context.WithValue(ctx, probeKey{}, b), b.settings.ProbeTimeout)
	defer cancel()
	return check(probeCtx)
}

// Run probes with check whenever a probe is due (see the package comment)
// until ctx ends. changed is called with each change of state, and once
// with the first probe's result.
func (b *Breaker) Run(ctx context.Context, check func(context.Context) error, changed func(open bool, cause error)) {
	first := true
	ticker := time.NewTicker(tick)
	defer ticker.Stop()
	for {
		if b.Due() {
			b.Probe(ctx, check, func(open bool, cause error) {
				if !first && changed != nil {
					changed(open, cause)
				}
			})
			if first && ctx.Err() == nil && changed != nil {
				changed(b.Err() != nil, b.Err())
			}
			first = false
		}
		select {
		case <-ctx.Done():
			return
		case <-ticker.C:
		case <-b.wake:
		}
	}
}
