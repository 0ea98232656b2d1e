package app_test

import (
	"context"
	"testing"
	"time"

	"github.com/liveproctor/workspaces/pkg/fault"
	"github.com/liveproctor/workspaces/services/auth/internal/app"
)

func (f *workspaces) revoke(authz string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.revoked == nil {
		f.revoked = map[string]bool{}
	}
	f.revoked[authz] = true
}

// A revoked key pair's cached access is dropped when a caller of
// ForgetKeyPairAccess says so, so its next login is refused at once.
func TestForgottenKeyPairsAreCheckedAgain(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	f.login(t, "ada@example.com")
	f.ws.revoke(alice)
	// Cached: still a yes within the TTL, until someone tells.
	f.login(t, "ada@example.com")
	f.now = f.now.Add(time.Millisecond)
	if err := f.app.ForgetKeyPairs(ctx, service, "w1", []string{"alice-key"}); err != nil {
		t.Fatal(err)
	}
	f.now = f.now.Add(time.Millisecond)
	_, _, err := f.app.CreateToken(ctx, alice, "ada@example.com", "w1")
	wantKind(t, err, fault.Unauthenticated)

	// Only those who may act for the workspace may ask.
	wantKind(t, f.app.ForgetKeyPairs(ctx, mallory, "w1", []string{"x"}), fault.NotFound)
	wantKind(t, f.app.ForgetKeyPairs(ctx, service, "w1", make([]string, 101)), fault.Invalid)
}

// A cached access check lasts no longer than the key pair: past its
// expiresAt, the workspace service is asked again (and refuses it).
func TestCachedAccessEndsWhenTheKeyPairExpires(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	f.ws.set("w1", app.WorkspaceStatus{Active: true, CallerKeyExpiresAt: f.now.Add(500 * time.Millisecond)})
	f.login(t, "ada@example.com")
	f.ws.revoke(alice) // what the workspace service answers once it expired
	f.now = f.now.Add(499 * time.Millisecond)
	f.login(t, "ada@example.com") // still cached, still valid
	f.now = f.now.Add(time.Millisecond)
	_, _, err := f.app.CreateToken(ctx, alice, "ada@example.com", "w1")
	wantKind(t, err, fault.Unauthenticated)
}
