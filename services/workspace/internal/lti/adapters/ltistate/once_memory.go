package ltistate

import (
	"sync"
	"time"
)

// onceMap keeps values under keys until they expire or are taken, at most
// max at once: the in-process stores' common part.
type onceMap[V any] struct {
	now func() time.Time
	max int

	mu     sync.Mutex
	values map[string]onceValue[V]
}

type onceValue[V any] struct {
	value V
	until time.Time
}

func newOnceMap[V any](max int, now func() time.Time) *onceMap[V] {
	if now == nil {
		now = time.Now
	}
	return &onceMap[V]{now: now, max: max, values: make(map[string]onceValue[V])}
}

// put stores v under key for ttl, or reports false when max live values
// are stored, with how long until the earliest of them expires: it refuses
// the new one rather than drop one still in use, after making room from
// the expired.
func (m *onceMap[V]) put(key string, v V, ttl time.Duration) (bool, time.Duration) {
	now := m.now()
	m.mu.Lock()
	defer m.mu.Unlock()
	if _, replaced := m.values[key]; !replaced && len(m.values) >= m.max {
		var earliest time.Time
		for k, stored := range m.values {
			switch {
			case !now.Before(stored.until):
				delete(m.values, k)
			case earliest.IsZero() || stored.until.Before(earliest):
				earliest = stored.until
			}
		}
		if len(m.values) >= m.max {
			return false, earliest.Sub(now)
		}
	}
	m.values[key] = onceValue[V]{value: v, until: now.Add(ttl)}
	return true, 0
}

// get returns the value under key, if it has not expired, and leaves it.
func (m *onceMap[V]) get(key string) (V, bool) {
	now := m.now()
	m.mu.Lock()
	defer m.mu.Unlock()
	stored, ok := m.values[key]
	if !ok || !now.Before(stored.until) {
		var zero V
		return zero, false
	}
	return stored.value, true
}

// take returns the value under key, if it has not expired, and removes it.
func (m *onceMap[V]) take(key string) (V, bool) {
	now := m.now()
	m.mu.Lock()
	defer m.mu.Unlock()
	stored, ok := m.values[key]
	delete(m.values, key)
	if !ok || !now.Before(stored.until) {
		var zero V
		return zero, false
	}
	return stored.value, true
}
