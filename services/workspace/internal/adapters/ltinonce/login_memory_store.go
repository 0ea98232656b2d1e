package ltinonce

import (
	"context"
	"sync"
	"time"

	"github.com/liveproctor/workspaces/pkg/fault"
	"github.com/liveproctor/workspaces/services/workspace/internal/app"
)

// MemoryLogins keeps LTI 1.3 logins in this process: right for one
// replica (or tests); a launch that reaches another replica than its
// login finds nothing there.
type MemoryLogins struct {
	now func() time.Time
	max int

	mu     sync.Mutex
	logins map[string]memoryLogin // by LoginKey
}

type memoryLogin struct {
	login app.Lti13Login
	until time.Time
}

var _ app.Lti13Logins = (*MemoryLogins)(nil)

// NewMemoryLogins returns a store of at most max live logins, on the
// clock now (nil: time.Now).
func NewMemoryLogins(max int, now func() time.Time) *MemoryLogins {
	if now == nil {
		now = time.Now
	}
	return &MemoryLogins{now: now, max: max, logins: make(map[string]memoryLogin)}
}

var errLoginsFull = fault.New(fault.Unavailable, "too many LTI 1.3 logins at once: launch again in a minute")

// Put stores l under state for ttl. When max live logins are stored it
// refuses the new one rather than drop one whose launch may be under way.
func (s *MemoryLogins) Put(_ context.Context, state string, l app.Lti13Login, ttl time.Duration) error {
	now := s.now()
	key := LoginKey(state)
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, replaced := s.logins[key]; !replaced && len(s.logins) >= s.max {
		for k, stored := range s.logins {
			if !now.Before(stored.until) {
				delete(s.logins, k)
			}
		}
		if len(s.logins) >= s.max {
			return errLoginsFull
		}
	}
	s.logins[key] = memoryLogin{login: l, until: now.Add(ttl)}
	return nil
}

// Take returns the login stored under state, if it has not expired, and
// removes it.
func (s *MemoryLogins) Take(_ context.Context, state string) (app.Lti13Login, bool, error) {
	now := s.now()
	key := LoginKey(state)
	s.mu.Lock()
	defer s.mu.Unlock()
	stored, ok := s.logins[key]
	delete(s.logins, key)
	if !ok || !now.Before(stored.until) {
		return app.Lti13Login{}, false, nil
	}
	return stored.login, true, nil
}
