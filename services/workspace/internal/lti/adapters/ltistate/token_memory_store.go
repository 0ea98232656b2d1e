package ltistate

import (
	"context"
	"sync"
	"time"

	ltiapp "github.com/liveproctor/workspaces/services/workspace/internal/lti/app"
)

// MemoryPlatformTokens keeps the tool's access tokens in this process, for
// a replica without Redis: at most max of them (a full store forgets one,
// which is fetched again when next needed), and the fetch locks.
type MemoryPlatformTokens struct {
	now func() time.Time
	max int

	mu     sync.Mutex
	tokens map[string]ltiapp.PlatformToken
	locks  map[string]tokenLock
}

type tokenLock struct {
	owner string
	until time.Time
}

var _ ltiapp.PlatformTokenStore = (*MemoryPlatformTokens)(nil)

// NewMemoryPlatformTokens returns an empty store of at most max tokens on
// the clock now (time.Now when nil).
func NewMemoryPlatformTokens(max int, now func() time.Time) *MemoryPlatformTokens {
	if now == nil {
		now = time.Now
	}
	return &MemoryPlatformTokens{now: now, max: max, tokens: map[string]ltiapp.PlatformToken{}, locks: map[string]tokenLock{}}
}

// Get returns the token under key, until its UseUntil.
func (s *MemoryPlatformTokens) Get(_ context.Context, key string) (ltiapp.PlatformToken, bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	t, ok := s.tokens[key]
	if !ok || !s.now().Before(t.UseUntil) {
		return ltiapp.PlatformToken{}, false, nil
	}
	return t, true, nil
}

// Lock takes key's lock for owner for ttl.
func (s *MemoryPlatformTokens) Lock(_ context.Context, key, owner string, ttl time.Duration) (bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.now()
	if l, ok := s.locks[key]; ok && now.Before(l.until) {
		return false, nil
	}
	s.locks[key] = tokenLock{owner: owner, until: now.Add(ttl)}
	return true, nil
}

// Put stores t under key and releases owner's lock.
func (s *MemoryPlatformTokens) Put(_ context.Context, key, owner string, t ltiapp.PlatformToken) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.now()
	if _, ok := s.tokens[key]; !ok && len(s.tokens) >= s.max {
		s.evict(now)
	}
	s.tokens[key] = t
	s.unlock(key, owner)
	return nil
}

// evict forgets the expired tokens, or one if none is.
func (s *MemoryPlatformTokens) evict(now time.Time) {
	for k, t := range s.tokens {
		if !now.Before(t.UseUntil) {
			delete(s.tokens, k)
		}
	}
	for k := range s.tokens {
		if len(s.tokens) < s.max {
			return
		}
		delete(s.tokens, k)
	}
}

// Unlock releases key's lock if owner holds it.
func (s *MemoryPlatformTokens) Unlock(_ context.Context, key, owner string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.unlock(key, owner)
	return nil
}

func (s *MemoryPlatformTokens) unlock(key, owner string) {
	if l, ok := s.locks[key]; ok && l.owner == owner {
		delete(s.locks, key)
	}
}

// Drop removes the token under key if it is still accessToken.
func (s *MemoryPlatformTokens) Drop(_ context.Context, key, accessToken string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if t, ok := s.tokens[key]; ok && t.AccessToken == accessToken {
		delete(s.tokens, key)
	}
	return nil
}
