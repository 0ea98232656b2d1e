package ltistate

import (
	"context"
	"sync"
	"time"

	"github.com/liveproctor/workspaces/pkg/fault"
	ltiapp "github.com/liveproctor/workspaces/services/workspace/internal/lti/app"
)

// MemoryNonces keeps nonces in this process: right for one replica (or
// tests), blind to launches other replicas saw.
type MemoryNonces struct {
	now func() time.Time
	max int

	mu     sync.Mutex
	expiry map[string]time.Time
}

var _ ltiapp.NonceStore = (*MemoryNonces)(nil)

// NewMemoryNonces returns a store of at most max live nonces, on the clock
// now (nil: time.Now).
func NewMemoryNonces(max int, now func() time.Time) *MemoryNonces {
	if now == nil {
		now = time.Now
	}
	return &MemoryNonces{now: now, max: max, expiry: make(map[string]time.Time)}
}

var errFull = fault.New(fault.Unavailable, "too many LTI launches at once to check them for replays; retry shortly")

// Use records nonce for consumerKey for ttl; false when it was already
// recorded and has not expired. When max live nonces are recorded, it
// refuses rather than forget one that might be replayed.
func (s *MemoryNonces) Use(_ context.Context, consumerKey, nonce string, ttl time.Duration) (bool, error) {
	now := s.now()
	key := NonceKey(consumerKey, nonce)
	s.mu.Lock()
	defer s.mu.Unlock()
	if until, ok := s.expiry[key]; ok && now.Before(until) {
		return false, nil
	}
	if len(s.expiry) >= s.max {
		for k, until := range s.expiry {
			if !now.Before(until) {
				delete(s.expiry, k)
			}
		}
		if len(s.expiry) >= s.max {
			return false, errFull
		}
	}
	s.expiry[key] = now.Add(ttl)
	return true, nil
}
