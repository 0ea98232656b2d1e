package claimloop_test

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/liveproctor/workspaces/pkg/claimloop"
)

// within bounds every wait of these tests; none is expected to come near.
const within = 10 * time.Second

// queue hands out 0..n-1, then none.
type queue struct {
	mu     sync.Mutex
	next   int
	n      int
	claims int
}

func (q *queue) claim(context.Context) (int, bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.claims++
	if q.next == q.n {
		return 0, false
	}
	q.next++
	return q.next - 1, true
}

func (q *queue) claimed() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.claims
}

// run runs the loop until the test ends, or until the function it returns
// is called, which returns once Run has.
func run(t *testing.T, workers int, poll time.Duration, claim func(context.Context) (int, bool),
	work func(context.Context, int), opts ...claimloop.Option) (stop func()) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		claimloop.Run(ctx, workers, poll, claim, work, opts...)
	}()
	stop = sync.OnceFunc(func() {
		cancel()
		select {
		case <-done:
		case <-time.After(within):
			t.Error("Run did not return once its context ended")
		}
	})
	t.Cleanup(stop)
	return stop
}

// receive waits for what c brings.
func receive[T any](t *testing.T, c <-chan T, what string) (v T) {
	t.Helper()
	select {
	case v = <-c:
	case <-time.After(within):
		t.Fatalf("%s never came", what)
	}
	return v
}

// While items are due the loop claims again at once (the poll here is an
// hour), and no more than workers are worked on at once: a claim waits for
// a free worker.
func TestClaimsWhileDueWithinTheBound(t *testing.T) {
	q := &queue{n: 10}
	var mu sync.Mutex
	running, most := 0, 0
	started := make(chan int, q.n)
	release := make(chan struct{})
	finished := make(chan int, q.n)
	run(t, 3, time.Hour, q.claim, func(_ context.Context, item int) {
		mu.Lock()
		running++
		most = max(most, running)
		mu.Unlock()
		started <- item
		<-release
		mu.Lock()
		running--
		mu.Unlock()
		finished <- item
	})
	for range 3 {
		receive(t, started, "a worker's start")
	}
	if got := q.claimed(); got != 3 {
		t.Fatalf("%d claims with three workers busy, want 3", got)
	}
	close(release)
	seen := map[int]bool{}
	for range q.n {
		seen[receive(t, finished, "an item's end")] = true
	}
	mu.Lock()
	defer mu.Unlock()
	if len(seen) != q.n || most > 3 {
		t.Fatalf("worked on %d distinct items of %d, at most %d at once; want all, at most 3", len(seen), q.n, most)
	}
}

// A claim that finds nothing (or fails) is tried again after the poll.
func TestLooksAgainAfterThePoll(t *testing.T) {
	var calls atomic.Int32
	got := make(chan int, 1)
	run(t, 1, time.Millisecond, func(context.Context) (int, bool) {
		if calls.Add(1) == 4 {
			return 7, true
		}
		return 0, false
	}, func(_ context.Context, item int) { got <- item })
	if item := receive(t, got, "the item due after three empty claims"); item != 7 {
		t.Fatalf("worked on %d, want 7", item)
	}
}

// Work that waits for its context to end is stopped with Run: at once
// without StopGrace or with a zero grace, once its grace is over with one.
func TestWorkEndsWithRun(t *testing.T) {
	for _, c := range []struct {
		name string
		opts []claimloop.Option
	}{
		{"without StopGrace", nil},
		{"a zero grace", []claimloop.Option{claimloop.StopGrace(0)}},
		{"a grace over", []claimloop.Option{claimloop.StopGrace(time.Millisecond)}},
	} {
		t.Run(c.name, func(t *testing.T) {
			q := &queue{n: 1}
			started := make(chan struct{})
			var ended atomic.Bool
			stop := run(t, 1, time.Hour, q.claim, func(ctx context.Context, _ int) {
				close(started)
				<-ctx.Done()
				ended.Store(true)
			}, c.opts...)
			receive(t, started, "the work's start")
			stop()
			if !ended.Load() {
				t.Fatal("Run returned before its work did")
			}
		})
	}
}

// With StopGrace, work in flight goes on past Run's context, with its
// values, and Run waits for it.
func TestStopGraceLetsWorkFinish(t *testing.T) {
	type key struct{}
	q := &queue{n: 1}
	inWork := make(chan context.Context)
	release := make(chan struct{})
	var finished atomic.Bool
	ctx, cancel := context.WithCancel(context.WithValue(context.Background(), key{}, "v"))
	defer cancel()
	done := make(chan struct{})
	go func() {
		defer close(done)
		claimloop.Run(ctx, 1, time.Hour, q.claim, func(ctx context.Context, _ int) {
			inWork <- ctx
			<-release
			finished.Store(ctx.Err() == nil)
		}, claimloop.StopGrace(time.Hour))
	}()
	work := receive(t, inWork, "the work's start")
	cancel()
	if work.Err() != nil || work.Value(key{}) != "v" {
		t.Fatalf("the work's context once Run's ended: %v, value %v; want live, with Run's values", work.Err(), work.Value(key{}))
	}
	close(release)
	receive(t, done, "Run's return")
	if !finished.Load() {
		t.Fatal("the work in flight was cancelled within its grace")
	}
}
