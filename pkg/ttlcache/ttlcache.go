// Package ttlcache is a small bounded cache whose entries expire.
//
// It keeps hot, short-lived answers (a credential check, a visibility check)
// off the database. When full it first drops expired entries, then an
// arbitrary one: with short lifetimes that is as good as LRU and needs no
// bookkeeping on reads.
package ttlcache

import (
	"sync"
	"time"
)

// Cache maps keys to values for at most TTL each, holding at most Size entries.
type Cache[K comparable, V any] struct {
	mu    sync.Mutex
	items map[K]entry[V]
	size  int
	ttl   time.Duration
	now   func() time.Time
}

type entry[V any] struct {
	value   V
	expires time.Time
}

// New returns a cache of at most size entries (at least 1) living ttl each.
// now is the clock (time.Now when nil).
func New[K comparable, V any](size int, ttl time.Duration, now func() time.Time) *Cache[K, V] {
	if size < 1 {
		size = 1
	}
	if now == nil {
		now = time.Now
	}
	return &Cache[K, V]{items: make(map[K]entry[V], min(size, 1024)), size: size, ttl: ttl, now: now}
}

// Get returns the live value stored under key.
func (c *Cache[K, V]) Get(key K) (V, bool) {
	v, _, ok := c.getWithExpiry(key)
	return v, ok
}

// getWithExpiry is Get, with when the value expires.
func (c *Cache[K, V]) getWithExpiry(key K) (V, time.Time, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.items[key]
	if !ok || !c.now().Before(e.expires) {
		var zero V
		return zero, time.Time{}, false
	}
	return e.value, e.expires, true
}

// Set stores value under key for the cache's TTL. It reports whether a
// live entry had to be dropped to make room, for a cache whose entries
// must not be lost unnoticed.
func (c *Cache[K, V]) Set(key K, value V) (evictedLive bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	now := c.now()
	if _, ok := c.items[key]; !ok && len(c.items) >= c.size {
		evictedLive = c.evict(now)
	}
	c.items[key] = entry[V]{value: value, expires: now.Add(c.ttl)}
	return evictedLive
}

// Delete drops key.
func (c *Cache[K, V]) Delete(key K) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.items, key)
}

// Clear drops every entry.
func (c *Cache[K, V]) Clear() {
	c.mu.Lock()
	defer c.mu.Unlock()
	clear(c.items)
}

// Len returns the number of entries held, live or expired.
func (c *Cache[K, V]) Len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.items)
}

// evict makes room for one entry, and reports whether it dropped a live
// one. Called with mu held.
func (c *Cache[K, V]) evict(now time.Time) (live bool) {
	for k, e := range c.items {
		if !now.Before(e.expires) {
			delete(c.items, k)
		}
	}
	for k := range c.items {
		if len(c.items) < c.size {
			return live
		}
		delete(c.items, k)
		live = true
	}
	return live
}
