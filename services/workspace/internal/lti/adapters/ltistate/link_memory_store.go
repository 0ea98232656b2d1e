package ltistate

import (
	"context"
	"time"

	"github.com/liveproctor/workspaces/pkg/fault"
	ltiapp "github.com/liveproctor/workspaces/services/workspace/internal/lti/app"
)

// MemoryRegistrationLinks keeps LTI Dynamic Registration links in this
// process: right for one replica (or tests).
type MemoryRegistrationLinks struct {
	links *onceMap[ltiapp.RegistrationLink] // by RegistrationLinkKey
}

var _ ltiapp.RegistrationLinkStore = (*MemoryRegistrationLinks)(nil)

// NewMemoryRegistrationLinks returns a store of at most max live links, on
// the clock now (nil: time.Now).
func NewMemoryRegistrationLinks(max int, now func() time.Time) *MemoryRegistrationLinks {
	return &MemoryRegistrationLinks{links: newOnceMap[ltiapp.RegistrationLink](max, now)}
}

var errLinksFull = fault.New(fault.Unavailable, "too many LTI registration links at once: make one again in a minute")

// Put stores l under secret for ttl, or refuses it when max live links are
// stored.
func (s *MemoryRegistrationLinks) Put(_ context.Context, secret string, l ltiapp.RegistrationLink, ttl time.Duration) error {
	if ok, _ := s.links.put(RegistrationLinkKey(secret), l, ttl); !ok {
		return errLinksFull
	}
	return nil
}

// Take returns the link stored under secret, if it has not expired, and
// removes it.
func (s *MemoryRegistrationLinks) Take(_ context.Context, secret string) (ltiapp.RegistrationLink, bool, error) {
	l, ok := s.links.take(RegistrationLinkKey(secret))
	return l, ok, nil
}
