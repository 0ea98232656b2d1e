package ttlcache_test

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/liveproctor/workspaces/pkg/ttlcache"
)

// source is a slow backend a test releases by hand.
type source struct {
	loads   atomic.Int32
	started chan struct{} // one send per load, when it starts (buffered)
	release chan struct{}
	value   atomic.Int32
	err     error
}

func newSource() *source { return &source{started: make(chan struct{}, 100)} }

func (s *source) load(ctx context.Context) (int, bool, error) {
	s.loads.Add(1)
	s.started <- struct{}{}
	if s.release != nil {
		select {
		case <-s.release:
		case <-ctx.Done():
			return 0, false, ctx.Err()
		}
	}
	return int(s.value.Load()), true, s.err
}

// Callers that miss at once cause one load, and all get its value.
func TestLoaderLoadsOnceForConcurrentMisses(t *testing.T) {
	src := newSource()
	src.release = make(chan struct{})
	src.value.Store(7)
	l := ttlcache.NewLoader[string, int](ttlcache.New[string, int](10, time.Minute, nil), ttlcache.LoaderOptions{})
	var wg sync.WaitGroup
	got := make([]int, 50)
	for i := range got {
		wg.Add(1)
		go func() {
			defer wg.Done()
			v, err := l.Get(context.Background(), "k", src.load)
			if err != nil {
				t.Error(err)
			}
			got[i] = v
		}()
	}
	<-src.started // the first load has started
	close(src.release)
	wg.Wait()
	if n := src.loads.Load(); n != 1 {
		t.Fatalf("%d loads, want 1", n)
	}
	for i, v := range got {
		if v != 7 {
			t.Fatalf("caller %d got %d", i, v)
		}
	}
}

// A value near its expiry keeps serving while one background load
// replaces it; past its TTL it is never served.
func TestLoaderRefreshesAheadAndNeverServesExpired(t *testing.T) {
	clk := &clock{t: time.Unix(1000, 0)}
	var mu sync.Mutex
	now := func() time.Time { mu.Lock(); defer mu.Unlock(); return clk.t }
	advance := func(d time.Duration) { mu.Lock(); clk.t = clk.t.Add(d); mu.Unlock() }
	src := newSource()
	src.value.Store(1)
	l := ttlcache.NewLoader[string, int](ttlcache.New[string, int](10, 10*time.Second, now), ttlcache.LoaderOptions{RefreshAhead: 2 * time.Second})
	ctx := context.Background()
	if v, err := l.Get(ctx, "k", src.load); err != nil || v != 1 {
		t.Fatalf("first Get = %d, %v", v, err)
	}
	src.value.Store(2)
	src.release = make(chan struct{})
	advance(8 * time.Second) // in the last 2 s of its life
	for range 20 {
		if v, err := l.Get(ctx, "k", src.load); err != nil || v != 1 {
			t.Fatalf("Get while refreshing = %d, %v; want the held 1", v, err)
		}
	}
	close(src.release)
	// Past the first value's TTL, a Get has the renewal's: stored already,
	// or the load still in flight, which it joins.
	advance(2 * time.Second)
	if v, err := l.Get(ctx, "k", src.load); err != nil || v != 2 {
		t.Fatalf("Get after the first value's TTL = %d, %v; want the renewal's 2", v, err)
	}
	if n := src.loads.Load(); n != 2 {
		t.Fatalf("%d loads, want 2 (the first and one refresh)", n)
	}
	advance(10 * time.Second) // past the refreshed value's TTL, however late it was stored
	if _, ok := l.Cache().Get("k"); ok {
		t.Fatal("a value outlived its TTL")
	}
}

// A load that started before a Forget of its key is handed to its
// callers but not stored; errors and values not kept are not stored.
func TestLoaderForgetAndFailures(t *testing.T) {
	clk := &clock{t: time.Unix(1000, 0)}
	var mu sync.Mutex
	now := func() time.Time { mu.Lock(); defer mu.Unlock(); return clk.t }
	src := newSource()
	src.release = make(chan struct{})
	src.value.Store(3)
	l := ttlcache.NewLoader[string, int](ttlcache.New[string, int](10, time.Minute, now), ttlcache.LoaderOptions{})
	done := make(chan int)
	go func() {
		v, _ := l.Get(context.Background(), "k", src.load)
		done <- v
	}()
	<-src.started
	mu.Lock()
	clk.t = clk.t.Add(time.Second) // the Forget comes after the load started
	mu.Unlock()
	l.Forget("k")
	close(src.release)
	if v := <-done; v != 3 {
		t.Fatalf("the waiting caller got %d", v)
	}
	if _, ok := l.Cache().Get("k"); ok {
		t.Fatal("a load started before a Forget was stored")
	}

	failing := newSource()
	failing.err = errors.New("down")
	lf := ttlcache.NewLoader[string, int](ttlcache.New[string, int](10, time.Minute, nil), ttlcache.LoaderOptions{})
	for range 3 {
		if _, err := lf.Get(context.Background(), "k", failing.load); err == nil {
			t.Fatal("no error")
		}
	}
	if n := failing.loads.Load(); n != 3 {
		t.Fatalf("%d loads, want 3: a failure is not kept", n)
	}
}

// A caller that gives up returns at once; the load goes on for the others.
func TestLoaderCallerCancelDoesNotCancelTheLoad(t *testing.T) {
	src := newSource()
	src.release = make(chan struct{})
	src.value.Store(9)
	l := ttlcache.NewLoader[string, int](ttlcache.New[string, int](10, time.Minute, nil), ttlcache.LoaderOptions{})
	ctx, cancel := context.WithCancel(context.Background())
	errs := make(chan error)
	go func() {
		_, err := l.Get(ctx, "k", src.load)
		errs <- err
	}()
	<-src.started
	cancel()
	if err := <-errs; !errors.Is(err, context.Canceled) {
		t.Fatalf("the cancelled caller got %v", err)
	}
	other := make(chan int)
	go func() {
		v, _ := l.Get(context.Background(), "k", src.load)
		other <- v
	}()
	close(src.release)
	if v := <-other; v != 9 || src.loads.Load() != 1 {
		t.Fatalf("the other caller got %d after %d loads", v, src.loads.Load())
	}
}

// Clear drops every value, and a load that started before it is handed to
// its callers but not stored, as after a Forget.
func TestLoaderClear(t *testing.T) {
	src := newSource()
	src.value.Store(5)
	l := ttlcache.NewLoader[string, int](ttlcache.New[string, int](10, time.Minute, nil), ttlcache.LoaderOptions{})
	ctx := context.Background()
	for _, k := range []string{"a", "b"} {
		if _, err := l.Get(ctx, k, src.load); err != nil {
			t.Fatal(err)
		}
	}
	src.release = make(chan struct{})
	done := make(chan int)
	go func() {
		v, _ := l.Get(ctx, "c", src.load)
		done <- v
	}()
	<-src.started // a and b's loads
	<-src.started
	<-src.started // c's, in flight
	l.Clear()
	close(src.release)
	if v := <-done; v != 5 {
		t.Fatalf("the waiting caller got %d", v)
	}
	if n := l.Cache().Len(); n != 0 {
		t.Fatalf("%d values left after Clear (a load started before it stored its own?)", n)
	}
	if v, err := l.Get(ctx, "a", src.load); err != nil || v != 5 || src.loads.Load() != 4 {
		t.Fatalf("Get after Clear = %d, %v after %d loads; want a new load", v, err, src.loads.Load())
	}
}
