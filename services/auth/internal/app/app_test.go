package app_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/liveproctor/workspaces/pkg/basicauth"
	"github.com/liveproctor/workspaces/pkg/fault"
	"github.com/liveproctor/workspaces/services/auth/internal/adapters/memstore"
	"github.com/liveproctor/workspaces/services/auth/internal/app"
	"github.com/liveproctor/workspaces/services/auth/internal/domain"
)

var (
	service = basicauth.Header("service-key", "service-secret")
	alice   = basicauth.Header("alice-key", "alice-secret") // may act for workspace "w1"
	mallory = basicauth.Header("mallory-key", "mallory-secret")
)

// workspaces answers like the workspace service: alice sees w1, the service
// sees everything, anything else is unauthenticated.
type workspaces struct {
	mu     sync.Mutex
	status map[string]app.WorkspaceStatus
	calls  int
	down   bool
	// recorded are the revocations recorded in the audit trail; while
	// recordDown, recording fails.
	recorded   []app.Revocation
	recordDown bool
	// revoked credentials answer Unauthenticated, as a revoked or expired
	// key pair does.
	revoked map[string]bool
}

func (f *workspaces) RecordRevocation(_ context.Context, authz string, r app.Revocation) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	switch {
	case f.recordDown:
		return fault.New(fault.Unavailable, "down")
	case authz != service:
		return fault.New(fault.PermissionDenied, "only the service records revocations")
	}
	f.recorded = append(f.recorded, r)
	return nil
}

func (f *workspaces) Status(_ context.Context, authz, id string) (app.WorkspaceStatus, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls++
	if f.down {
		return app.WorkspaceStatus{}, fault.New(fault.Unavailable, "down")
	}
	st, ok := f.status[id]
	switch {
	case authz != service && authz != alice && authz != mallory, f.revoked[authz]:
		return app.WorkspaceStatus{}, fault.New(fault.Unauthenticated, "bad credentials")
	case !ok, authz == mallory, authz == alice && id != "w1":
		return app.WorkspaceStatus{}, fault.New(fault.NotFound, "not found")
	}
	return st, nil
}

func (f *workspaces) set(id string, st app.WorkspaceStatus) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.status[id] = st
}

type fixture struct {
	app *app.App
	ws  *workspaces
	now time.Time
}

func newFixture(t *testing.T) *fixture {
	f := &fixture{
		ws:  &workspaces{status: map[string]app.WorkspaceStatus{"w1": {Active: true}, "w2": {Active: true}}},
		now: time.Date(2026, 11, 22, 8, 0, 0, 0, time.UTC),
	}
	clock := func() time.Time { return f.now }
	f.app = app.New(memstore.New(clock), f.ws, app.Settings{ServiceAuthorization: service, AccessCacheTTL: time.Second},
		app.WithClock(clock))
	return f
}

func (f *fixture) login(t *testing.T, email string) domain.Token {
	t.Helper()
	token, s, err := f.app.CreateToken(context.Background(), alice, email, "w1")
	if err != nil {
		t.Fatal(err)
	}
	if !s.ExpiresAt.Equal(f.now.Add(8*time.Hour)) || s.Email != email || s.WorkspaceID != "w1" {
		t.Fatalf("session %+v", s)
	}
	return token
}

// asBearer is the Authorization header presenting token.
func asBearer(token domain.Token) string { return "Bearer " + string(token) }

func wantKind(t *testing.T, err error, kind fault.Kind) {
	t.Helper()
	if err == nil || fault.KindOf(err) != kind {
		t.Fatalf("error %v, want kind %v", err, kind)
	}
}

func TestLoginChecksInputAndAccess(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	_, _, err := f.app.CreateToken(ctx, alice, "not an email", "w1")
	wantKind(t, err, fault.Invalid)
	_, _, err = f.app.CreateToken(ctx, alice, "ada@example.com", "")
	wantKind(t, err, fault.Invalid)
	_, _, err = f.app.CreateToken(ctx, "", "ada@example.com", "w1")
	wantKind(t, err, fault.Unauthenticated)
	_, _, err = f.app.CreateToken(ctx, "Basic nobody", "ada@example.com", "w1")
	wantKind(t, err, fault.Unauthenticated)
	_, _, err = f.app.CreateToken(ctx, alice, "ada@example.com", "w2")
	wantKind(t, err, fault.NotFound)

	a, b := f.login(t, "ada@example.com"), f.login(t, "ada@example.com")
	if a == b {
		t.Fatal("two logins gave the same token")
	}
	// The access answer was cached: one workspace call for both logins.
	if f.ws.calls != 3 {
		t.Fatalf("workspace calls = %d, want 3 (two refusals, then one yes reused)", f.ws.calls)
	}
}

func TestSessionEndsWithExpiryRevocationAndDelete(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	token := f.login(t, "ada@example.com")
	other := f.login(t, "bob@example.com")

	if s, err := f.app.Session(ctx, asBearer(token)); err != nil || s.Email != "ada@example.com" {
		t.Fatalf("Session = %+v, %v", s, err)
	}
	_, err := f.app.Session(ctx, "Bearer forged")
	wantKind(t, err, fault.Unauthenticated)
	_, err = f.app.Session(ctx, asBearer(domain.NewToken()))
	wantKind(t, err, fault.Unauthenticated)

	// Logout of ada (case-insensitively) leaves bob.
	if err := f.app.RevokeUser(ctx, alice, "ADA@example.com", "w1"); err != nil {
		t.Fatal(err)
	}
	_, err = f.app.Session(ctx, asBearer(token))
	wantKind(t, err, fault.Unauthenticated)
	if _, err := f.app.Session(ctx, asBearer(other)); err != nil {
		t.Fatalf("bob's session ended with ada's logout: %v", err)
	}

	// Deleting the workspace ends every session at once, revoked or not.
	f.ws.set("w1", app.WorkspaceStatus{Active: false, TokenCutoff: f.now})
	_, err = f.app.Session(ctx, asBearer(other))
	wantKind(t, err, fault.Unauthenticated)
	// ... and an undelete does not bring back tokens issued before it.
	f.ws.set("w1", app.WorkspaceStatus{Active: true, TokenCutoff: f.now})
	_, err = f.app.Session(ctx, asBearer(other))
	wantKind(t, err, fault.Unauthenticated)
	f.now = f.now.Add(time.Minute)
	fresh := f.login(t, "bob@example.com")
	if _, err := f.app.Session(ctx, asBearer(fresh)); err != nil {
		t.Fatalf("a token issued after the undelete: %v", err)
	}

	// Expiry.
	f.now = f.now.Add(8 * time.Hour)
	_, err = f.app.Session(ctx, asBearer(fresh))
	wantKind(t, err, fault.Unauthenticated)
}

func TestSessionFailsClosed(t *testing.T) {
	f := newFixture(t)
	token := f.login(t, "ada@example.com")
	f.ws.down = true
	_, err := f.app.Session(context.Background(), asBearer(token))
	wantKind(t, err, fault.Unavailable)
}

func TestEndSessionAndTenantScopedRevocation(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	token := f.login(t, "ada@example.com")
	second := f.login(t, "ada@example.com")

	// Another tenant learns nothing and revokes nothing.
	if _, active, err := f.app.IntrospectToken(ctx, mallory, token); err != nil || active {
		t.Fatalf("mallory's introspection: active %v, %v", active, err)
	}
	if err := f.app.RevokeToken(ctx, mallory, token); err != nil {
		t.Fatal(err)
	}
	if s, active, err := f.app.IntrospectToken(ctx, alice, token); err != nil || !active || s.Email != "ada@example.com" {
		t.Fatalf("alice's introspection: %+v active %v, %v", s, active, err)
	}

	if err := f.app.EndSession(ctx, asBearer(token)); err != nil {
		t.Fatal(err)
	}
	_, err := f.app.Session(ctx, asBearer(token))
	wantKind(t, err, fault.Unauthenticated)
	wantKind(t, f.app.EndSession(ctx, asBearer(token)), fault.Unauthenticated)
	if _, err := f.app.Session(ctx, asBearer(second)); err != nil {
		t.Fatalf("ending one session ended another: %v", err)
	}

	if err := f.app.RevokeWorkspace(ctx, service, "w1"); err != nil {
		t.Fatal(err)
	}
	_, err = f.app.Session(ctx, asBearer(second))
	wantKind(t, err, fault.Unauthenticated)
	wantKind(t, f.app.RevokeWorkspace(ctx, mallory, "w1"), fault.NotFound)
}

// A logout and a workspace's revocation are recorded in the audit trail
// after they are made, with the service's own credentials; when recording
// fails the answer is Unavailable, and the revocation stands.
func TestRevocationsAreRecorded(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	token := f.login(t, "ada@example.com")
	if err := f.app.RevokeUser(ctx, alice, "Ada@Example.com", "w1"); err != nil {
		t.Fatal(err)
	}
	if err := f.app.RevokeWorkspace(ctx, service, "w2"); err != nil {
		t.Fatal(err)
	}
	want := []app.Revocation{{WorkspaceID: "w1", User: "ada@example.com"}, {WorkspaceID: "w2"}}
	if len(f.ws.recorded) != 2 || f.ws.recorded[0].WorkspaceID != want[0].WorkspaceID || f.ws.recorded[0].User != want[0].User ||
		f.ws.recorded[1].WorkspaceID != want[1].WorkspaceID || f.ws.recorded[1].User != "" {
		t.Fatalf("recorded = %+v, want %+v", f.ws.recorded, want)
	}
	if _, err := f.app.Session(ctx, asBearer(token)); fault.KindOf(err) != fault.Unauthenticated {
		t.Fatalf("session after logout: %v, want Unauthenticated", err)
	}

	f.ws.recordDown = true
	token = f.login(t, "bob@example.com")
	err := f.app.RevokeUser(ctx, alice, "bob@example.com", "w1")
	if fault.KindOf(err) != fault.Unavailable {
		t.Fatalf("logout with the audit trail down: %v, want Unavailable", err)
	}
	if _, err := f.app.Session(ctx, asBearer(token)); fault.KindOf(err) != fault.Unauthenticated {
		t.Fatalf("session after a logout whose record failed: %v, want Unauthenticated (revoked all the same)", err)
	}
}
