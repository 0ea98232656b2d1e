package ltistate_test

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// onceStore is what the single-use stores share: ltiapp.LTI13LoginStore and
// ltiapp.LTI13DeepLinkStore.
type onceStore[V any] interface {
	Put(ctx context.Context, id string, v V, ttl time.Duration) error
	Take(ctx context.Context, id string) (V, bool, error)
}

// onceContract is what every single-use store does: a value comes back
// once, as stored, under its own id only, however many callers race for
// it.
func onceContract[V comparable](t *testing.T, s onceStore[V], v V) {
	t.Helper()
	ctx := context.Background()
	if err := s.Put(ctx, "id-1", v, time.Minute); err != nil {
		t.Fatal(err)
	}
	if _, ok, err := s.Take(ctx, "id-2"); ok || err != nil {
		t.Fatalf("Take of another id = %v, %v; want nothing", ok, err)
	}
	got, ok, err := s.Take(ctx, "id-1")
	if !ok || err != nil || got != v {
		t.Fatalf("Take = %+v, %v, %v; want %+v", got, ok, err, v)
	}
	if _, ok, err := s.Take(ctx, "id-1"); ok || err != nil {
		t.Fatalf("a second Take = %v, %v; want nothing", ok, err)
	}
	if err := s.Put(ctx, "raced", v, time.Minute); err != nil {
		t.Fatal(err)
	}
	var wins atomic.Int32
	var wg sync.WaitGroup
	for range 20 {
		wg.Go(func() {
			if _, ok, err := s.Take(ctx, "raced"); err == nil && ok {
				wins.Add(1)
			}
		})
	}
	wg.Wait()
	if wins.Load() != 1 {
		t.Fatalf("%d of 20 concurrent takes of one value won, want 1", wins.Load())
	}
}
