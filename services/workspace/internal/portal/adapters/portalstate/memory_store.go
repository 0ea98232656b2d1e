package portalstate

import (
	"context"
	"sync"
	"time"

	"github.com/liveproctor/workspaces/pkg/fault"
	portalapp "github.com/liveproctor/workspaces/services/workspace/internal/portal/app"
	portaldomain "github.com/liveproctor/workspaces/services/workspace/internal/portal/domain"
)

// MemoryStore keeps the portal's links in this process, under the same
// keys and expiries as RedisStore: right for one replica (REDIS_ADDR
// unset) and for tests.
type MemoryStore struct {
	now func() time.Time
	max int

	mu    sync.Mutex
	links map[string]kept[portaldomain.Link] // by linkKey
	ways  map[string]kept[string]            // a link's id, by openKey or sessionKey
	made  map[string]kept[int64]             // links made in a window, by madeKey
}

// kept is a value and when it expires.
type kept[V any] struct {
	value V
	until time.Time
}

var _ portalapp.Store = (*MemoryStore)(nil)

// NewMemoryStore returns a store of at most max links at once, on the
// clock now (nil: time.Now).
func NewMemoryStore(max int, now func() time.Time) *MemoryStore {
	if now == nil {
		now = time.Now
	}
	return &MemoryStore{now: now, max: max, links: map[string]kept[portaldomain.Link]{}, ways: map[string]kept[string]{},
		made: map[string]kept[int64]{}}
}

var errFull = fault.New(fault.Unavailable, "too many portal links at once: make one again in a few minutes")

// Add stores l, and the way to it by secret, or refuses it when max links
// are stored: it refuses the new one rather than forget one in use, after
// forgetting the expired.
func (s *MemoryStore) Add(_ context.Context, l portaldomain.Link, secret string) error {
	now := s.now()
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.links) >= s.max {
		s.forgetExpired(now)
		if len(s.links) >= s.max {
			return errFull
		}
	}
	s.links[linkKey(l.ID)] = kept[portaldomain.Link]{value: l, until: l.ForgetAt()}
	s.ways[openKey(secret)] = kept[string]{value: l.ID, until: l.ExpiresAt}
	return nil
}

// forgetExpired drops what has expired at now.
func (s *MemoryStore) forgetExpired(now time.Time) {
	for k, v := range s.links {
		if !now.Before(v.until) {
			delete(s.links, k)
		}
	}
	for k, v := range s.ways {
		if !now.Before(v.until) {
			delete(s.ways, k)
		}
	}
	for k, v := range s.made {
		if !now.Before(v.until) {
			delete(s.made, k)
		}
	}
}

// CountMade increments the window's count.
func (s *MemoryStore) CountMade(_ context.Context, workspaceID string, window time.Time) (int64, error) {
	now := s.now()
	s.mu.Lock()
	defer s.mu.Unlock()
	key := madeKey(workspaceID, window)
	c := s.made[key]
	if !now.Before(c.until) {
		c = kept[int64]{until: window.Add(madeKeyLife)}
	}
	c.value++
	s.made[key] = c
	return c.value, nil
}

// Spend takes the link's id secret leads to.
func (s *MemoryStore) Spend(_ context.Context, secret string) (string, bool, error) {
	now := s.now()
	s.mu.Lock()
	defer s.mu.Unlock()
	way, ok := s.ways[openKey(secret)]
	delete(s.ways, openKey(secret))
	return way.value, ok && now.Before(way.until), nil
}

// StartSession makes token lead to the link id until end.
func (s *MemoryStore) StartSession(_ context.Context, token, id string, end time.Time) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.ways[sessionKey(token)] = kept[string]{value: id, until: end}
	return nil
}

// SessionLink returns the link's id token leads to.
func (s *MemoryStore) SessionLink(_ context.Context, token string) (string, bool, error) {
	now := s.now()
	s.mu.Lock()
	defer s.mu.Unlock()
	way, ok := s.ways[sessionKey(token)]
	return way.value, ok && now.Before(way.until), nil
}

// Link returns the link id.
func (s *MemoryStore) Link(_ context.Context, id string) (portaldomain.Link, bool, error) {
	now := s.now()
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.link(id, now)
}

func (s *MemoryStore) link(id string, now time.Time) (portaldomain.Link, bool, error) {
	l, ok := s.links[linkKey(id)]
	if !ok || !now.Before(l.until) {
		return portaldomain.Link{}, false, nil
	}
	return l.value, true, nil
}

// Update applies apply to the link id and stores the result, in one step.
func (s *MemoryStore) Update(_ context.Context, id string, apply func(*portaldomain.Link) (bool, error)) (portaldomain.Link, bool, error) {
	now := s.now()
	s.mu.Lock()
	defer s.mu.Unlock()
	l, ok, _ := s.link(id, now)
	if !ok {
		return portaldomain.Link{}, false, nil
	}
	changed, err := apply(&l)
	if err != nil || !changed {
		return l, true, err
	}
	s.links[linkKey(id)] = kept[portaldomain.Link]{value: l, until: l.ForgetAt()}
	return l, true, nil
}
