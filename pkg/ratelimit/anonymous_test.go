package ratelimit_test

import (
	"context"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/liveproctor/workspaces/pkg/clientaddr"
	"github.com/liveproctor/workspaces/pkg/fault"
	"github.com/liveproctor/workspaces/pkg/ratelimit"
)

func from(addr string) context.Context {
	return clientaddr.NewContext(context.Background(), netip.MustParseAddr(addr))
}

// anonymousCalls calls until one is refused (at most n) and returns how
// many passed and the refusal.
func anonymousCalls(t *testing.T, g *ratelimit.Guard, ctx context.Context, n int) (int, error) {
	t.Helper()
	for i := range n {
		if err := g.LimitAnonymous(ctx); err != nil {
			return i, err
		}
	}
	return n, nil
}

// One address over its limit is refused with 429 (Throttled), and counts
// nothing against the total; another address goes on until the total, which
// every replica shares, is spent: then 503 (Unavailable), for everyone.
func TestAnonymousLimitsPerAddressThenTotalInRedis(t *testing.T) {
	rdb, _ := startRedis(t)
	s := ratelimit.Settings{Anonymous: ratelimit.AnonymousLimits{
		PerAddress: ratelimit.Limit{Rate: 1, Burst: 3},
		Total:      ratelimit.Limit{Rate: 1, Burst: 5},
	}}
	a, b := ratelimit.NewGuard(rdb, s, quiet), ratelimit.NewGuard(rdb, s, quiet)
	ctx := context.Background()
	const addrKey, totalKey = "gcra:{lti}:addr:192.0.2.1:1:3", "gcra:{lti}:total:1:5"

	passed, err := anonymousCalls(t, a, from("192.0.2.1"), 10)
	if passed != 3 || fault.KindOf(err) != fault.Throttled {
		t.Fatalf("%d passed, then %v; want the address's burst of 3, then Throttled", passed, err)
	}
	if e, ok := fault.As(err); !ok || e.RetryAfter < time.Second || !strings.Contains(e.Message, "too many LTI requests from your address") {
		t.Fatalf("refusal %+v", e)
	}
	total, err := rdb.Get(ctx, totalKey).Result()
	if err != nil {
		t.Fatalf("the total's key: %v", err)
	}
	if err := b.LimitAnonymous(from("192.0.2.1")); fault.KindOf(err) != fault.Throttled {
		t.Fatalf("the address on the other replica: %v", err)
	}
	if again, _ := rdb.Get(ctx, totalKey).Result(); again != total {
		t.Fatalf("a refusal by the address's limit moved the total from %s to %s", total, again)
	}
	if n, err := rdb.Exists(ctx, addrKey, totalKey).Result(); err != nil || n != 2 {
		t.Fatalf("keys %s, %s: %d exist (%v)", addrKey, totalKey, n, err)
	}

	// Two more from another address (on the other replica) spend the
	// total's burst of 5.
	passed, err = anonymousCalls(t, b, from("2001:db8::1"), 10)
	if passed != 2 || fault.KindOf(err) != fault.Unavailable {
		t.Fatalf("%d passed, then %v; want what is left of the total (2), then Unavailable", passed, err)
	}
	if e, ok := fault.As(err); !ok || e.RetryAfter < time.Second {
		t.Fatalf("refusal %+v", e)
	}
	if err := a.LimitAnonymous(from("198.51.100.7")); fault.KindOf(err) != fault.Unavailable {
		t.Fatalf("a third address: %v, want Unavailable", err)
	}
	// IPv6 addresses count by /64.
	if n, err := rdb.Exists(ctx, "gcra:{lti}:addr:2001:db8::/64:1:3").Result(); err != nil || n != 1 {
		t.Fatalf("the IPv6 address's key: %d (%v)", n, err)
	}
}

// The address's and the total's keys are counted by one script, so on a
// Redis Cluster they must hash to one slot: they share the hash tag.
func TestAnonymousKeysShareAHashTag(t *testing.T) {
	rdb, _ := startRedis(t)
	g := ratelimit.NewGuard(rdb, ratelimit.Settings{Anonymous: ratelimit.AnonymousLimits{
		PerAddress: ratelimit.Limit{Rate: 20, Burst: 600},
		Total:      ratelimit.Limit{Rate: 1000, Burst: 10000},
	}}, quiet)
	if err := g.LimitAnonymous(from("192.0.2.9")); err != nil {
		t.Fatal(err)
	}
	keys, err := rdb.Keys(context.Background(), "*").Result()
	if err != nil {
		t.Fatal(err)
	}
	if len(keys) != 2 {
		t.Fatalf("keys %q, want the address's and the total's", keys)
	}
	for _, k := range keys {
		if !strings.HasPrefix(k, "gcra:{lti}:") {
			t.Errorf("key %s lacks the hash tag {lti}", k)
		}
	}
}

// With Redis down each replica counts both limits itself, the address's
// first: nothing is refused because Redis is down.
func TestAnonymousLimitsFallBackToLocalCounts(t *testing.T) {
	rdb, srv := startRedis(t)
	c := newClock()
	l := ratelimit.NewLimiter(rdb, ratelimit.LimiterOptions{Policy: "anonymous", Timeout: 200 * time.Millisecond, LocalKeys: 100, Logger: quiet, Now: c.now})
	if err := srv.Stop(); err != nil {
		t.Fatal(err)
	}
	total := ratelimit.Keyed{Key: "total", Limit: ratelimit.Limit{Rate: 10, Burst: 4}}
	each := func(addr string) (int, ratelimit.Decision) {
		return l.AllowEach(context.Background(), []ratelimit.Keyed{{Key: addr, Limit: ratelimit.Limit{Rate: 10, Burst: 2}}, total})
	}
	for range 2 {
		if i, d := each("a"); i != -1 || !d.Allowed {
			t.Fatalf("refused by %d: %+v", i, d)
		}
	}
	if i, d := each("a"); i != 0 || d.Allowed || d.RetryAfter != 100*time.Millisecond {
		t.Fatalf("the address over its burst: refused by %d, %+v", i, d)
	}
	for range 2 {
		if i, d := each("b"); i != -1 {
			t.Fatalf("refused by %d: %+v", i, d)
		}
	}
	if i, d := each("c"); i != 1 || d.Allowed || d.RetryAfter != 100*time.Millisecond {
		t.Fatalf("over the total's burst: refused by %d, %+v", i, d)
	}
	c.advance(100 * time.Millisecond)
	if i, d := each("c"); i != -1 {
		t.Fatalf("one interval later: refused by %d, %+v", i, d)
	}
}
