package limits_test

import (
	"context"
	"log/slog"
	"net/netip"
	"testing"
	"time"

	"github.com/liveproctor/workspaces/pkg/clientaddr"
	"github.com/liveproctor/workspaces/pkg/fault"
	"github.com/liveproctor/workspaces/pkg/ratelimit"
	"github.com/liveproctor/workspaces/services/workspace/internal/adapters/limits"
	"github.com/liveproctor/workspaces/services/workspace/internal/domain"
)

// A key pair's calls count against its workspace's own limit when it has
// one, the default otherwise; RATE_LIMIT=0 turns both off.
func TestLimitKeyPairUsesTheWorkspacesOwnLimitOrTheDefault(t *testing.T) {
	for _, tc := range []struct {
		name         string
		defaultLimit ratelimit.Limit
		own          *domain.RateLimit
		allowed      int // of 5 calls at once
	}{
		{"default", ratelimit.Limit{Rate: 1, Burst: 2}, nil, 2},
		{"own", ratelimit.Limit{Rate: 1, Burst: 2}, &domain.RateLimit{PerSecond: 1, Burst: 4}, 4},
		{"off", ratelimit.Limit{}, &domain.RateLimit{PerSecond: 1, Burst: 1}, 5},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := limits.New(ratelimit.NewGuard(nil, ratelimit.Settings{Default: tc.defaultLimit}, slog.New(slog.DiscardHandler)))
			allowed := 0
			for range 5 {
				switch err := g.LimitKeyPair(context.Background(), "key", tc.own); {
				case err == nil:
					allowed++
				case fault.KindOf(err) != fault.Throttled:
					t.Fatalf("error %v, want Throttled", err)
				}
			}
			if allowed != tc.allowed {
				t.Errorf("%d of 5 calls allowed, want %d", allowed, tc.allowed)
			}
		})
	}
}

// Failures are counted per address and app key: past the bound the key is
// refused before its credentials are looked at.
func TestFailuresRefuseAfterTheBound(t *testing.T) {
	g := limits.New(ratelimit.NewGuard(nil, ratelimit.Settings{
		Failures: ratelimit.FailureLimits{PerKey: 2, PerAddress: 100, Window: time.Minute},
	}, slog.New(slog.DiscardHandler)))
	ctx := context.Background()
	for range 2 {
		if err := g.CheckFailures(ctx, "key"); err != nil {
			t.Fatal(err)
		}
		g.Failed(ctx, "key")
	}
	if err := g.CheckFailures(ctx, "key"); fault.KindOf(err) != fault.Throttled {
		t.Fatalf("error %v, want Throttled", err)
	}
	if err := g.CheckFailures(ctx, "other-key"); err != nil {
		t.Fatalf("another key: %v", err)
	}
}

// Anonymous calls from one address over its limit are Throttled; past the
// total of all addresses they are Unavailable.
func TestLimitAnonymousPerAddressThenTotal(t *testing.T) {
	g := limits.New(ratelimit.NewGuard(nil, ratelimit.Settings{Anonymous: ratelimit.AnonymousLimits{
		PerAddress: ratelimit.Limit{Rate: 1, Burst: 2},
		Total:      ratelimit.Limit{Rate: 1, Burst: 3},
	}}, slog.New(slog.DiscardHandler)))
	from := func(addr string) context.Context {
		return clientaddr.NewContext(context.Background(), netip.MustParseAddr(addr))
	}
	for _, tc := range []struct {
		addr    string
		refused bool
		kind    fault.Kind
	}{
		{addr: "192.0.2.1"}, {addr: "192.0.2.1"}, {addr: "192.0.2.1", refused: true, kind: fault.Throttled},
		{addr: "192.0.2.2"}, {addr: "192.0.2.3", refused: true, kind: fault.Unavailable},
	} {
		err := g.LimitAnonymous(from(tc.addr))
		if (err != nil) != tc.refused || (err != nil && fault.KindOf(err) != tc.kind) {
			t.Fatalf("from %s: %v, want refused %v (kind %v)", tc.addr, err, tc.refused, tc.kind)
		}
	}
}
