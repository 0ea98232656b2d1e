package app_test

import (
	"context"
	"log/slog"
	"net/netip"
	"sync/atomic"
	"testing"
	"time"

	"github.com/liveproctor/workspaces/pkg/basicauth"
	"github.com/liveproctor/workspaces/pkg/clientaddr"
	"github.com/liveproctor/workspaces/pkg/fault"
	"github.com/liveproctor/workspaces/pkg/ratelimit"
	"github.com/liveproctor/workspaces/services/auth/internal/adapters/memstore"
	"github.com/liveproctor/workspaces/services/auth/internal/app"
	"github.com/liveproctor/workspaces/services/auth/internal/domain"
)

// guardedStore runs a login's limits one after the other, as the Redis
// store does on a Cluster, and counts its calls.
type guardedStore struct {
	*memstore.Store
	limits app.Limits
	calls  atomic.Int32
}

func (g *guardedStore) SaveLogin(ctx context.Context, d domain.Digest, s domain.Session, login app.LoginLimits) error {
	g.calls.Add(1)
	if err := g.limits.CheckFailures(ctx, login.AppKey); err != nil {
		return err
	}
	if err := g.limits.LimitKeyPair(ctx, login.AppKey, login.Own); err != nil {
		return err
	}
	return g.Save(ctx, d, s)
}

// A login whose access is remembered hands its limits to the store, which
// runs them with the save; the order and the outcomes stay those of the
// other path: an address with too many failures is refused even with good
// credentials, and nothing is saved.
func TestRememberedLoginRunsItsLimitsWithTheSave(t *testing.T) {
	now := time.Date(2026, 11, 22, 8, 0, 0, 0, time.UTC)
	clock := func() time.Time { return now }
	ws := &workspaces{status: map[string]app.WorkspaceStatus{"w1": {Active: true}}}
	guard := ratelimit.NewGuard(nil, ratelimit.Settings{
		Default:  ratelimit.Limit{Rate: 100, Burst: 100},
		Failures: ratelimit.FailureLimits{PerKey: 2, PerAddress: 10, Window: time.Minute},
	}, slog.New(slog.DiscardHandler))
	store := &guardedStore{Store: memstore.New(clock), limits: guard}
	a := app.New(store, ws, app.Settings{ServiceAuthorization: service, AccessCacheTTL: time.Minute},
		app.WithClock(clock), app.WithLimits(store.limits))
	from := func(last byte) context.Context {
		return clientaddr.NewContext(context.Background(), netip.AddrFrom4([4]byte{192, 0, 2, last}))
	}

	if _, _, err := a.CreateToken(from(1), alice, "ada@example.com", "w1"); err != nil {
		t.Fatal(err)
	}
	if n := store.calls.Load(); n != 0 {
		t.Fatalf("the first login (access not yet known) used SaveLogin %d times", n)
	}
	token, _, err := a.CreateToken(from(1), alice, "ada@example.com", "w1")
	if err != nil {
		t.Fatal(err)
	}
	if n := store.calls.Load(); n != 1 {
		t.Fatalf("the second login used SaveLogin %d times, want 1", n)
	}
	if _, err := store.Lookup(context.Background(), token.Digest()); err != nil {
		t.Fatalf("the guarded login's token: %v", err)
	}

	guard.Failed(from(2), "alice-key")
	guard.Failed(from(2), "alice-key")
	_, _, err = a.CreateToken(from(2), alice, "ada@example.com", "w1")
	wantKind(t, err, fault.Throttled)
	if n := store.calls.Load(); n != 2 {
		t.Fatalf("the blocked login used SaveLogin %d times in all, want 2", n)
	}
	// The same app key from that address is refused before its
	// credentials are looked at, remembered or not.
	_, _, err = a.CreateToken(from(2), basicauth.Header("alice-key", "a guess"), "ada@example.com", "w1")
	wantKind(t, err, fault.Throttled)
	if _, _, err := a.CreateToken(from(3), alice, "ada@example.com", "w1"); err != nil {
		t.Fatalf("from another address: %v", err)
	}
}
