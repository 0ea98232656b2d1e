// Package tokenstoretest is the contract every domain.TokenStore
// implementation passes. Each adapter's tests call Run with a constructor;
// the same cases then hold for the in-memory store and for Redis, so the
// application can rely on them.
package tokenstoretest

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/liveproctor/workspaces/services/auth/internal/domain"
)

// NewStore returns a store for one test that reads the time from now.
// Stores may share their data between tests (the Redis tests share one
// server): each case uses workspaces no other case uses.
type NewStore func(t *testing.T, now func() time.Time) domain.TokenStore

// Run runs the contract against stores made by newStore.
func Run(t *testing.T, newStore NewStore) {
	cases := []struct {
		name string
		run  func(*testing.T, *fixture)
	}{
		{"SaveThenLookupRoundTrips", saveThenLookupRoundTrips},
		{"LaunchSessionIsRevokedLikeAnyOther", launchSessionIsRevokedLikeAnyOther},
		{"UnknownTokenIsNotFound", unknownTokenIsNotFound},
		{"ExpiredTokenIsNotFound", expiredTokenIsNotFound},
		{"RevokeEndsOneToken", revokeEndsOneToken},
		{"RevokeUserEndsThatUsersTokens", revokeUserEndsThatUsersTokens},
		{"RevokeWorkspaceEndsItsTokens", revokeWorkspaceEndsItsTokens},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			// A clock the test moves, starting now: Redis expires keys
			// by its own clock, so the store's must not be far from it.
			f := &fixture{at: time.Now().UTC().Truncate(time.Millisecond)}
			f.store = newStore(t, f.now)
			c.run(t, f)
		})
	}
}

// fixture is one case's store and the clock it reads.
type fixture struct {
	store domain.TokenStore
	mu    sync.Mutex
	at    time.Time
}

func (f *fixture) now() time.Time {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.at
}

func (f *fixture) advance(d time.Duration) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.at = f.at.Add(d)
}

var sequence atomic.Int64

// workspace returns a workspace id no other case uses.
func workspace(t *testing.T) string {
	return fmt.Sprintf("%s-%d", strings.ReplaceAll(t.Name(), "/", "-"), sequence.Add(1))
}

// issue saves a new 8-hour token for email in workspace ws.
func (f *fixture) issue(t *testing.T, ws, email string) domain.Token {
	t.Helper()
	now := f.now()
	return f.save(t, domain.Session{Email: email, WorkspaceID: ws, IssuedAt: now, ExpiresAt: now.Add(domain.TokenTTL)})
}

// save saves a new token of session s.
func (f *fixture) save(t *testing.T, s domain.Session) domain.Token {
	t.Helper()
	token := domain.NewToken()
	if err := f.store.Save(context.Background(), token.Digest(), s); err != nil {
		t.Fatal(err)
	}
	return token
}

// wantLive checks that both reads of a session find the token's.
func (f *fixture) wantLive(t *testing.T, token domain.Token, email string) {
	t.Helper()
	for name, lookup := range f.lookups() {
		got, err := lookup(context.Background(), token.Digest())
		if err != nil || got.Email != email {
			t.Fatalf("%s = %+v, %v; want %s's session", name, got, err, email)
		}
	}
}

// wantNotFound checks that neither read of a session finds the token.
func (f *fixture) wantNotFound(t *testing.T, token domain.Token) {
	t.Helper()
	for name, lookup := range f.lookups() {
		if _, err := lookup(context.Background(), token.Digest()); !errors.Is(err, domain.ErrTokenNotFound) {
			t.Fatalf("%s: error %v, want ErrTokenNotFound", name, err)
		}
	}
}

// lookups are the store's two reads of a session, by name.
func (f *fixture) lookups() map[string]func(context.Context, domain.Digest) (domain.Session, error) {
	return map[string]func(context.Context, domain.Digest) (domain.Session, error){
		"Lookup": f.store.Lookup, "LookupWithLaunch": f.store.LookupWithLaunch,
	}
}

// A session comes back whole from LookupWithLaunch, an LTI 1.3 launch's
// id included, and from Lookup without that id.
func saveThenLookupRoundTrips(t *testing.T, f *fixture) {
	now := f.now()
	plain := domain.Session{Email: "Ada@example.com", WorkspaceID: workspace(t), IssuedAt: now, ExpiresAt: now.Add(domain.TokenTTL)}
	launched := plain
	launched.LTILaunchID = launchID
	for _, want := range []domain.Session{plain, launched} {
		token := f.save(t, want)
		without := want
		without.LTILaunchID = ""
		for _, read := range []struct {
			name   string
			lookup func(context.Context, domain.Digest) (domain.Session, error)
			want   domain.Session
		}{
			{"Lookup", f.store.Lookup, without},
			{"LookupWithLaunch", f.store.LookupWithLaunch, want},
		} {
			got, err := read.lookup(context.Background(), token.Digest())
			if err != nil {
				t.Fatalf("%s: %v", read.name, err)
			}
			if !got.IssuedAt.Equal(want.IssuedAt) || !got.ExpiresAt.Equal(want.ExpiresAt) ||
				got.Email != want.Email || got.WorkspaceID != want.WorkspaceID || got.LTILaunchID != read.want.LTILaunchID {
				t.Fatalf("%s = %+v, want %+v", read.name, got, read.want)
			}
		}
	}
}

// launchID is the shape of the workspace service's launch ids: 43
// characters of base64url.
const launchID = "Zm9v-YmFy_0123456789abcdefghijABCDEFGHIJklm"

// A launch's session is its workspace's and its user's like any other:
// each revocation ends it, and the launch id is not read back after.
func launchSessionIsRevokedLikeAnyOther(t *testing.T, f *fixture) {
	ctx := context.Background()
	ws, other := workspace(t), workspace(t)
	launch := func(ws, email string) domain.Token {
		now := f.now()
		return f.save(t, domain.Session{Email: email, WorkspaceID: ws, IssuedAt: now, ExpiresAt: now.Add(domain.TokenTTL), LTILaunchID: launchID})
	}
	one, ada, bob, elsewhere := launch(ws, "ada@example.com"), launch(ws, "ada@example.com"), launch(ws, "bob@example.com"), launch(other, "bob@example.com")
	if err := f.store.Revoke(ctx, one.Digest()); err != nil {
		t.Fatal(err)
	}
	f.wantNotFound(t, one)
	f.wantLive(t, ada, "ada@example.com")
	if err := f.store.RevokeUser(ctx, ws, "ada@example.com"); err != nil {
		t.Fatal(err)
	}
	f.wantNotFound(t, ada)
	f.wantLive(t, bob, "bob@example.com")
	if err := f.store.RevokeWorkspace(ctx, ws); err != nil {
		t.Fatal(err)
	}
	f.wantNotFound(t, bob)
	f.wantLive(t, elsewhere, "bob@example.com")
}

func unknownTokenIsNotFound(t *testing.T, f *fixture) {
	f.wantNotFound(t, domain.NewToken())
}

// A token lives until, and not at, its session's ExpiresAt.
func expiredTokenIsNotFound(t *testing.T, f *fixture) {
	token := f.issue(t, workspace(t), "ada@example.com")
	f.advance(domain.TokenTTL - time.Millisecond)
	f.wantLive(t, token, "ada@example.com")
	f.advance(time.Millisecond)
	f.wantNotFound(t, token)
}

func revokeEndsOneToken(t *testing.T, f *fixture) {
	ws := workspace(t)
	a1, a2 := f.issue(t, ws, "ada@example.com"), f.issue(t, ws, "ada@example.com")
	if err := f.store.Revoke(context.Background(), a1.Digest()); err != nil {
		t.Fatal(err)
	}
	f.wantNotFound(t, a1)
	f.wantLive(t, a2, "ada@example.com")
	if err := f.store.Revoke(context.Background(), domain.NewToken().Digest()); err != nil {
		t.Fatalf("revoking an unknown token: %v", err)
	}
}

// A user is their email in any case; other users, the same user in other
// workspaces, and tokens issued afterwards live on.
func revokeUserEndsThatUsersTokens(t *testing.T, f *fixture) {
	ws, other := workspace(t), workspace(t)
	ada1, ada2 := f.issue(t, ws, "ada@example.com"), f.issue(t, ws, "Ada@Example.com")
	bob := f.issue(t, ws, "bob@example.com")
	adaElsewhere := f.issue(t, other, "ada@example.com")
	if err := f.store.RevokeUser(context.Background(), ws, "ADA@example.com"); err != nil {
		t.Fatal(err)
	}
	f.wantNotFound(t, ada1)
	f.wantNotFound(t, ada2)
	f.wantLive(t, bob, "bob@example.com")
	f.wantLive(t, adaElsewhere, "ada@example.com")
	f.wantLive(t, f.issue(t, ws, "ada@example.com"), "ada@example.com")
}

func revokeWorkspaceEndsItsTokens(t *testing.T, f *fixture) {
	ws, other := workspace(t), workspace(t)
	a, b := f.issue(t, ws, "ada@example.com"), f.issue(t, ws, "bob@example.com")
	kept := f.issue(t, other, "ada@example.com")
	if err := f.store.RevokeWorkspace(context.Background(), ws); err != nil {
		t.Fatal(err)
	}
	f.wantNotFound(t, a)
	f.wantNotFound(t, b)
	f.wantLive(t, kept, "ada@example.com")
	f.wantLive(t, f.issue(t, ws, "ada@example.com"), "ada@example.com")
	if err := f.store.RevokeWorkspace(context.Background(), workspace(t)); err != nil {
		t.Fatalf("revoking a workspace with no tokens: %v", err)
	}
}
