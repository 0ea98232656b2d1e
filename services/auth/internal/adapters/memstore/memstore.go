// Package memstore is an in-memory token store for unit tests of the
// application. It passes the same contract suite (domain/tokenstoretest)
// as the Redis adapter, and revokes the same way: a token is live while
// its workspace's and its user's generations are those it was issued
// under.
package memstore

import (
	"context"
	"sync"
	"time"

	"github.com/liveproctor/workspaces/services/auth/internal/domain"
)

// Store keeps sessions in a map.
type Store struct {
	mu       sync.Mutex
	now      func() time.Time
	sessions map[domain.Digest]stored
	wsGen    map[string]uint64
	userGen  map[user]uint64
}

// user is a user within a workspace.
type user struct{ workspaceID, key string }

func userOf(s domain.Session) user { return user{s.WorkspaceID, domain.UserKey(s.Email)} }

// stored is a session with the generations it was issued under.
type stored struct {
	session        domain.Session
	wsGen, userGen uint64
}

var _ domain.TokenStore = (*Store)(nil)

// New returns an empty store that reads the time from now.
func New(now func() time.Time) *Store {
	return &Store{now: now, sessions: map[domain.Digest]stored{}, wsGen: map[string]uint64{}, userGen: map[user]uint64{}}
}

// Save stores s under d; a session that has already expired is not stored.
func (m *Store) Save(_ context.Context, d domain.Digest, s domain.Session) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.now().Before(s.ExpiresAt) {
		m.sessions[d] = stored{session: s, wsGen: m.wsGen[s.WorkspaceID], userGen: m.userGen[userOf(s)]}
	}
	return nil
}

// Lookup returns the session without its launch id, as the Redis store
// does, so that the application's tests catch a read that needs it.
func (m *Store) Lookup(ctx context.Context, d domain.Digest) (domain.Session, error) {
	s, err := m.LookupWithLaunch(ctx, d)
	s.LTILaunchID = ""
	return s, err
}

func (m *Store) LookupWithLaunch(_ context.Context, d domain.Digest) (domain.Session, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	e, ok := m.sessions[d]
	if !ok || !m.now().Before(e.session.ExpiresAt) ||
		e.wsGen != m.wsGen[e.session.WorkspaceID] || e.userGen != m.userGen[userOf(e.session)] {
		delete(m.sessions, d)
		return domain.Session{}, domain.ErrTokenNotFound
	}
	return e.session, nil
}

func (m *Store) Revoke(_ context.Context, d domain.Digest) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.sessions, d)
	return nil
}

func (m *Store) RevokeUser(_ context.Context, workspaceID, email string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.userGen[user{workspaceID, domain.UserKey(email)}]++
	return nil
}

func (m *Store) RevokeWorkspace(_ context.Context, workspaceID string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.wsGen[workspaceID]++
	return nil
}
