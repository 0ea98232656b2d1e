package ltistate

import (
	"context"
	"time"

	ltiapp "github.com/liveproctor/workspaces/services/workspace/internal/lti/app"
)

// MemoryLogins keeps LTI 1.3 logins in this process: right for one
// replica (or tests); a launch that reaches another replica than its
// login finds nothing there.
type MemoryLogins struct {
	logins *onceMap[ltiapp.LTI13Login] // by LoginKey
}

var _ ltiapp.LTI13LoginStore = (*MemoryLogins)(nil)

// NewMemoryLogins returns a store of at most max pending logins (started,
// not yet taken nor expired), on the clock now (nil: time.Now).
func NewMemoryLogins(max int, now func() time.Time) *MemoryLogins {
	return &MemoryLogins{logins: newOnceMap[ltiapp.LTI13Login](max, now)}
}

// Put stores l under state for ttl. When max logins are pending it refuses
// the new one rather than drop one whose launch may be under way, saying
// when the earliest of them expires.
func (s *MemoryLogins) Put(_ context.Context, state string, l ltiapp.LTI13Login, ttl time.Duration) error {
	if ok, wait := s.logins.put(LoginKey(state), l, ttl); !ok {
		return errLoginsPending(wait)
	}
	return nil
}

// Get returns the login stored under state, if it has not expired, and
// leaves it.
func (s *MemoryLogins) Get(_ context.Context, state string) (ltiapp.LTI13Login, bool, error) {
	l, ok := s.logins.get(LoginKey(state))
	return l, ok, nil
}

// Take returns the login stored under state, if it has not expired, and
// removes it.
func (s *MemoryLogins) Take(_ context.Context, state string) (ltiapp.LTI13Login, bool, error) {
	l, ok := s.logins.take(LoginKey(state))
	return l, ok, nil
}
