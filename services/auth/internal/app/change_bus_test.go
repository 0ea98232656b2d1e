package app_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/liveproctor/workspaces/pkg/fault"
	"github.com/liveproctor/workspaces/services/auth/internal/adapters/memstore"
	"github.com/liveproctor/workspaces/services/auth/internal/app"
)

func (f *workspaces) restore(authz string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	delete(f.revoked, authz)
}

func (f *workspaces) callCount() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.calls
}

// wantCalls fails the test unless the workspace service has been asked
// want times in all.
func (f *fixture) wantCalls(t *testing.T, want int, why string) {
	t.Helper()
	if got := f.ws.callCount(); got != want {
		t.Fatalf("%s: the workspace service was asked %d times, want %d", why, got, want)
	}
}

// A workspace's change (a delete, a new rate limit) told on the cache bus
// ends the access checks remembered before it: those to the workspace,
// and those of its key pairs to any workspace.
func TestAWorkspaceChangeEndsRememberedAccess(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	f.login(t, "ada@example.com")
	f.ws.set("w1", app.WorkspaceStatus{Active: false, TokenCutoff: f.now})
	f.now = f.now.Add(time.Millisecond)
	f.app.WorkspaceChanged("w1", nil)
	f.now = f.now.Add(time.Millisecond)
	_, _, err := f.app.CreateToken(ctx, alice, "ada@example.com", "w1")
	wantKind(t, err, fault.NotFound)

	// Alice's own workspace (not w1) had its rate limit changed: what she
	// may do in w1 is asked again, with her workspace's new limit.
	f.ws.set("w1", app.WorkspaceStatus{Active: true})
	f.now = f.now.Add(2 * time.Second) // past the grace after the change above
	f.login(t, "ada@example.com")
	calls := f.ws.callCount()
	f.login(t, "ada@example.com")
	f.wantCalls(t, calls, "remembered")
	f.app.WorkspaceChanged("alices-own", []string{"alice-key"})
	f.now = f.now.Add(2 * time.Second)
	f.login(t, "ada@example.com")
	f.wantCalls(t, calls+1, "after her workspace changed")
}

// A key pair revoked on another replica, told on the cache bus, logs in
// no more.
func TestChangedKeyPairsAreCheckedAgain(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	f.login(t, "ada@example.com")
	f.ws.revoke(alice)
	f.login(t, "ada@example.com") // remembered: a yes within the TTL
	f.now = f.now.Add(time.Millisecond)
	f.app.KeyPairsChanged([]string{"alice-key"})
	f.now = f.now.Add(time.Millisecond)
	_, _, err := f.app.CreateToken(ctx, alice, "ada@example.com", "w1")
	wantKind(t, err, fault.Unauthenticated)
}

// The workspace-service replica asked right after a change may not have
// heard of it yet: its answer is used, but not remembered, for the grace
// after the change; later answers are remembered again.
func TestAnswersJustAfterAChangeAreNotRemembered(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	f.login(t, "ada@example.com")
	f.now = f.now.Add(time.Millisecond)
	f.app.KeyPairsChanged([]string{"alice-key"}) // revoked, say; the workspace replica asked has not heard
	calls := f.ws.callCount()
	f.now = f.now.Add(500 * time.Millisecond)
	f.login(t, "ada@example.com")
	f.login(t, "ada@example.com")
	f.wantCalls(t, calls+2, "within the grace")
	f.ws.revoke(alice) // it has heard now
	_, _, err := f.app.CreateToken(ctx, alice, "ada@example.com", "w1")
	wantKind(t, err, fault.Unauthenticated)

	f.ws.restore(alice)
	f.now = f.now.Add(time.Second)
	calls = f.ws.callCount()
	f.login(t, "ada@example.com")
	f.login(t, "ada@example.com")
	f.wantCalls(t, calls+1, "past the grace")
}

// When changes may have been missed, every remembered access check goes.
func TestForgetAllAccessAsksAgain(t *testing.T) {
	f := newFixture(t)
	f.login(t, "ada@example.com")
	calls := f.ws.callCount()
	f.login(t, "ada@example.com")
	f.wantCalls(t, calls, "remembered")
	f.app.ForgetAllAccess()
	f.login(t, "ada@example.com")
	f.wantCalls(t, calls+1, "after ForgetAllAccess")
}

// published records what ForgetKeyPairs published, or fails.
type published struct {
	mu   sync.Mutex
	keys []string
	err  error
}

func (p *published) PublishKeyPairsChanged(_ context.Context, _ string, appKeys []string) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.err != nil {
		return p.err
	}
	p.keys = append(p.keys, appKeys...)
	return nil
}

// ForgetKeyPairs (the gRPC API's ForgetKeyPairAccess) acts here at once
// and publishes to the other replicas; when it cannot publish, the caller
// gets Unavailable and may retry.
func TestForgetKeyPairsPublishes(t *testing.T) {
	f := newFixture(t)
	pub := &published{}
	clock := func() time.Time { return f.now }
	f.app = app.New(memstore.New(clock), f.ws, app.Settings{ServiceAuthorization: service, AccessCacheTTL: time.Second},
		app.WithClock(clock), app.WithChangePublisher(pub))
	ctx := context.Background()
	if err := f.app.ForgetKeyPairs(ctx, service, "w1", []string{"alice-key"}); err != nil {
		t.Fatal(err)
	}
	if len(pub.keys) != 1 || pub.keys[0] != "alice-key" {
		t.Fatalf("published %v", pub.keys)
	}
	pub.err = fault.Wrap(fault.Unavailable, errors.New("redis down"), "down")
	wantKind(t, f.app.ForgetKeyPairs(ctx, service, "w1", []string{"alice-key"}), fault.Unavailable)
}

// The replica the workspace service tells of a delete (RevokeWorkspace)
// stops reusing its access checks to the workspace at once, bus or no bus
// (a workspace service without Redis publishes nothing).
func TestRevokeWorkspaceEndsRememberedAccessHere(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	f.login(t, "ada@example.com")
	f.ws.set("w1", app.WorkspaceStatus{Active: false, TokenCutoff: f.now})
	f.now = f.now.Add(time.Millisecond)
	if err := f.app.RevokeWorkspace(ctx, service, "w1"); err != nil {
		t.Fatal(err)
	}
	f.now = f.now.Add(time.Millisecond)
	_, _, err := f.app.CreateToken(ctx, alice, "ada@example.com", "w1")
	wantKind(t, err, fault.NotFound)
}
