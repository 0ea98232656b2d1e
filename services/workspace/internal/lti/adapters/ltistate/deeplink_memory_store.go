package ltistate

import (
	"context"
	"time"

	"github.com/liveproctor/workspaces/pkg/fault"
	ltiapp "github.com/liveproctor/workspaces/services/workspace/internal/lti/app"
)

// MemoryDeepLinks keeps LTI 1.3 deep-linking requests in this process:
// right for one replica (or tests).
type MemoryDeepLinks struct {
	links *onceMap[ltiapp.LTI13DeepLink] // by DeepLinkKey
}

var _ ltiapp.LTI13DeepLinkStore = (*MemoryDeepLinks)(nil)

// NewMemoryDeepLinks returns a store of at most max live requests, on the
// clock now (nil: time.Now).
func NewMemoryDeepLinks(max int, now func() time.Time) *MemoryDeepLinks {
	return &MemoryDeepLinks{links: newOnceMap[ltiapp.LTI13DeepLink](max, now)}
}

var errDeepLinksFull = fault.New(fault.Unavailable, "too many LTI deep-linking requests at once: open the content picker again in a minute")

// Put stores l under id for ttl, or refuses it when max live requests are
// stored.
func (s *MemoryDeepLinks) Put(_ context.Context, id string, l ltiapp.LTI13DeepLink, ttl time.Duration) error {
	if ok, _ := s.links.put(DeepLinkKey(id), l, ttl); !ok {
		return errDeepLinksFull
	}
	return nil
}

// Take returns the request stored under id, if it has not expired, and
// removes it.
func (s *MemoryDeepLinks) Take(_ context.Context, id string) (ltiapp.LTI13DeepLink, bool, error) {
	l, ok := s.links.take(DeepLinkKey(id))
	return l, ok, nil
}
