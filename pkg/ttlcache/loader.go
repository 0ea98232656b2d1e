package ttlcache

import (
	"context"
	"sync"
	"time"
)

// Loader keeps a Cache filled from a slower source without a stampede:
//
//   - a missing or expired value is loaded once for all the callers that
//     want it at the same time (single-flight): the others wait for that
//     load, each until its own context ends;
//   - a value in the last RefreshAhead of its life is still returned, and
//     the first caller to see it starts one load in the background that
//     replaces it, so a value in steady use never expires under load;
//   - no value is ever returned past its TTL, and a load that started
//     before a Forget of its key, or a Clear, is not stored (it may have
//     read what the Forget or the Clear was about).
//
// A load runs on a context that keeps the first caller's values but not its
// cancellation, bounded by LoadTimeout: one caller giving up does not fail
// the others.
type Loader[K comparable, V any] struct {
	cache        *Cache[K, V]
	refreshAhead time.Duration
	loadTimeout  time.Duration

	mu sync.Mutex
	// inflight holds the load of each key being loaded. Only Forget and
	// Clear take a load out before it ends, so a load that finds itself
	// gone started before one of them, and does not store what it read.
	inflight map[K]*flight[V]
}

type flight[V any] struct {
	done chan struct{}
	v    V
	err  error
}

// LoaderOptions tune a Loader.
type LoaderOptions struct {
	// RefreshAhead is how long before its expiry a value in use is
	// reloaded in the background; zero: a fifth of the TTL.
	RefreshAhead time.Duration
	// LoadTimeout bounds one load; zero: 10 seconds.
	LoadTimeout time.Duration
}

// LoadFunc loads a value, and says whether to keep it: a value not kept
// is returned to the callers that waited for it, and loaded again by the
// next.
type LoadFunc[V any] func(ctx context.Context) (v V, keep bool, err error)

// NewLoader returns a loader over c.
func NewLoader[K comparable, V any](c *Cache[K, V], o LoaderOptions) *Loader[K, V] {
	if o.RefreshAhead <= 0 {
		o.RefreshAhead = c.ttl / 5
	}
	if o.LoadTimeout <= 0 {
		o.LoadTimeout = 10 * time.Second
	}
	return &Loader[K, V]{
		cache: c, refreshAhead: o.RefreshAhead, loadTimeout: o.LoadTimeout,
		inflight: map[K]*flight[V]{},
	}
}

// Get returns the live value of key, loading it with load when there is
// none (the load of the first caller of a flight serves all its callers;
// a load needing what a key leaves out, such as credentials kept only as
// a digest in the key, takes it from the closure).
func (l *Loader[K, V]) Get(ctx context.Context, key K, load LoadFunc[V]) (V, error) {
	if v, ok := l.Peek(ctx, key, load); ok {
		return v, nil // a value near its expiry serves while it is reloaded
	}
	f := l.start(ctx, key, load)
	select {
	case <-f.done:
		return f.v, f.err
	case <-ctx.Done():
		var zero V
		return zero, ctx.Err()
	}
}

// Peek returns the live value of key if one is held, without waiting for
// a load; like Get, it starts the background load of a value near its
// expiry.
func (l *Loader[K, V]) Peek(ctx context.Context, key K, load LoadFunc[V]) (V, bool) {
	v, ok, due := l.Lookup(key)
	if due {
		l.start(ctx, key, load)
	}
	return v, ok
}

// Lookup returns the live value of key if one is held, and whether it is
// due for a reload (in its last RefreshAhead), without loading anything.
// A caller on a hot path can then build its LoadFunc, which escapes to the
// heap, only when it calls Get or Peek: when the value is missing or due.
func (l *Loader[K, V]) Lookup(key K) (v V, ok, due bool) {
	v, expires, ok := l.cache.getWithExpiry(key)
	return v, ok, ok && l.due(expires)
}

// due reports whether a value expiring at expires is in its last
// RefreshAhead.
func (l *Loader[K, V]) due(expires time.Time) bool {
	return !l.cache.now().Before(expires.Add(-l.refreshAhead))
}

// Forget drops key, and keeps any load of it already running from storing
// what it read and from answering later callers: a Get after Forget waits
// for a load that started after it.
func (l *Loader[K, V]) Forget(key K) {
	l.mu.Lock()
	delete(l.inflight, key) // a Get after this starts a load of its own
	l.mu.Unlock()
	l.cache.Delete(key)
}

// Clear drops every key, as Forget does each: no load already running
// stores what it read.
func (l *Loader[K, V]) Clear() {
	l.mu.Lock()
	clear(l.inflight)
	l.mu.Unlock()
	l.cache.Clear()
}

// Cache is the cache the loader fills.
func (l *Loader[K, V]) Cache() *Cache[K, V] { return l.cache }

// start returns the load of key in flight, starting one if there is none
// and the cache, read again, does not hold a value that needs none (one a
// load stored since the caller looked).
func (l *Loader[K, V]) start(ctx context.Context, key K, load LoadFunc[V]) *flight[V] {
	l.mu.Lock()
	defer l.mu.Unlock()
	if f, ok := l.inflight[key]; ok {
		return f
	}
	if v, expires, ok := l.cache.getWithExpiry(key); ok && !l.due(expires) {
		f := &flight[V]{done: make(chan struct{}), v: v}
		close(f.done)
		return f
	}
	f := &flight[V]{done: make(chan struct{})}
	l.inflight[key] = f
	lctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), l.loadTimeout)
	go func() {
		defer cancel()
		v, keep, err := load(lctx)
		l.mu.Lock()
		if l.inflight[key] == f { // else forgotten since it started
			delete(l.inflight, key)
			if err == nil && keep {
				l.cache.Set(key, v)
			}
		}
		l.mu.Unlock()
		f.v, f.err = v, err
		close(f.done)
	}()
	return f
}
