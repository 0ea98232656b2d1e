package ttlcache_test

import (
	"testing"
	"time"

	"github.com/liveproctor/workspaces/pkg/ttlcache"
)

type clock struct{ t time.Time }

func (c *clock) now() time.Time { return c.t }

func TestExpiry(t *testing.T) {
	clk := &clock{t: time.Unix(1000, 0)}
	c := ttlcache.New[string, int](10, 5*time.Second, clk.now)
	c.Set("a", 1)
	if v, ok := c.Get("a"); !ok || v != 1 {
		t.Fatalf("Get = %v, %v", v, ok)
	}
	clk.t = clk.t.Add(5 * time.Second)
	if _, ok := c.Get("a"); ok {
		t.Fatal("entry outlived its TTL")
	}
}

func TestBoundAndDelete(t *testing.T) {
	clk := &clock{t: time.Unix(1000, 0)}
	c := ttlcache.New[int, int](3, time.Minute, clk.now)
	for i := range 10 {
		c.Set(i, i)
		if c.Len() > 3 {
			t.Fatalf("Len = %d after %d sets, bound is 3", c.Len(), i+1)
		}
	}
	if _, ok := c.Get(9); !ok {
		t.Error("the newest entry was evicted")
	}
	c.Delete(9)
	if _, ok := c.Get(9); ok {
		t.Error("Delete left the entry")
	}
}

func TestExpiredEntriesGoFirst(t *testing.T) {
	clk := &clock{t: time.Unix(1000, 0)}
	c := ttlcache.New[string, int](2, time.Second, clk.now)
	c.Set("old", 1)
	clk.t = clk.t.Add(500 * time.Millisecond)
	c.Set("live", 2)
	clk.t = clk.t.Add(600 * time.Millisecond) // "old" expired, "live" not
	if c.Set("new", 3) {
		t.Error("Set says it dropped a live entry, with an expired one there to drop")
	}
	if _, ok := c.Get("live"); !ok {
		t.Error("a live entry was evicted while an expired one was there")
	}
	if !c.Set("newer", 4) {
		t.Error("Set dropped one of two live entries and did not say so")
	}
	if c.Set("newer", 5) {
		t.Error("Set of a key held says it dropped an entry")
	}
}

func BenchmarkGetHit(b *testing.B) {
	c := ttlcache.New[string, int](1000, time.Minute, nil)
	c.Set("k", 1)
	for b.Loop() {
		c.Get("k")
	}
}
