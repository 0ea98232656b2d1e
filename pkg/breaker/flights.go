package breaker

import (
	"context"
	"math/rand/v2"
	"runtime"
	"sync"
	"time"
	"unsafe"
)

// flight is one call in flight, linked in its shard's list.
type flight struct {
	prev, next *flight
	start      time.Time
	cancel     context.CancelCauseFunc
	shard      int  // fixed for the record's life, through its reuses
	ok         bool // the call succeeded
}

// shardState is one share of the calls in flight, and how many of the
// calls it held succeeded.
type shardState struct {
	mu        sync.Mutex
	head      *flight
	succeeded uint64
}

// shard pads a shardState to whole cache lines, so that calls on
// different shards share no line.
type shard struct {
	shardState
	_ [128 - unsafe.Sizeof(shardState{})%128]byte
}

// flights registers the calls in flight, in shards so that concurrent
// calls seldom take the same lock. Records are reused through a sync.Pool,
// whose per-processor caches mostly hand a processor back its own records:
// the calls of one processor then keep to the same shard.
type flights struct {
	shards []shard
	free   sync.Pool
}

func (fs *flights) init() {
	n := min(max(8*runtime.GOMAXPROCS(0), 8), 256)
	fs.shards = make([]shard, n)
	fs.free.New = func() any { return &flight{shard: rand.IntN(n)} }
}

// enter registers a call that cancel ends, or returns nil if the breaker is
// open. It reads open under the shard's lock, and Probe sets it before
// taking the shards' locks to end the calls: a call either sees the breaker
// open here or is in the list when Probe ends the calls.
func (b *Breaker) enter(cancel context.CancelCauseFunc) *flight {
	f := b.free.Get().(*flight)
	start := b.now()
	s := &b.shards[f.shard]
	s.mu.Lock()
	if b.open.Load() {
		s.mu.Unlock()
		b.free.Put(f)
		return nil
	}
	f.start, f.cancel = start, cancel
	f.next = s.head
	if s.head != nil {
		s.head.prev = f
	}
	s.head = f
	s.mu.Unlock()
	return f
}

// leave unregisters a call entered, counting it if it succeeded.
func (b *Breaker) leave(f *flight) {
	s := &b.shards[f.shard]
	s.mu.Lock()
	if f.prev != nil {
		f.prev.next = f.next
	} else {
		s.head = f.next
	}
	if f.next != nil {
		f.next.prev = f.prev
	}
	if f.ok {
		s.succeeded++
	}
	s.mu.Unlock()
	*f = flight{shard: f.shard}
	b.free.Put(f)
}

// endAll cancels every call in flight with cause.
func (b *Breaker) endAll(cause error) {
	for i := range b.shards {
		s := &b.shards[i]
		s.mu.Lock()
		for f := s.head; f != nil; f = f.next {
			f.cancel(cause)
		}
		s.mu.Unlock()
	}
}

// waitedSince reports whether a call in flight reached SuspectAfter of
// waiting after since and by now.
func (b *Breaker) waitedSince(since, now time.Time) bool {
	for i := range b.shards {
		s := &b.shards[i]
		s.mu.Lock()
		found := false
		for f := s.head; f != nil && !found; f = f.next {
			at := f.start.Add(b.settings.SuspectAfter)
			found = at.After(since) && !at.After(now)
		}
		s.mu.Unlock()
		if found {
			return true
		}
	}
	return false
}

// succeeded returns how many calls have succeeded.
func (b *Breaker) succeeded() uint64 {
	var n uint64
	for i := range b.shards {
		s := &b.shards[i]
		s.mu.Lock()
		n += s.succeeded
		s.mu.Unlock()
	}
	return n
}
