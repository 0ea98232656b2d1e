package ratelimit_test

import (
	"context"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/liveproctor/workspaces/pkg/fault"
	"github.com/liveproctor/workspaces/pkg/ratelimit"
	"github.com/liveproctor/workspaces/pkg/testenv"
)

// clock is a time source the test moves by hand.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func newClock() *clock { return &clock{t: time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)} }

func (c *clock) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *clock) advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

var quiet = slog.New(slog.DiscardHandler)

// startRedis returns a client of a redis-server of the test's own.
func startRedis(t *testing.T) (redis.UniversalClient, *testenv.Server) {
	t.Helper()
	srv, err := testenv.StartRedis(context.Background(), testenv.RedisOptions{Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = srv.Stop() })
	rdb := redis.NewClient(&redis.Options{Addr: srv.Addr(), DialTimeout: time.Second, ReadTimeout: time.Second, MaxRetries: -1})
	t.Cleanup(func() { _ = rdb.Close() })
	return rdb, srv
}

// exhaust sends requests until one is refused and returns how many passed.
func exhaust(t *testing.T, l *ratelimit.Limiter, key string, lim ratelimit.Limit) (int, ratelimit.Decision) {
	t.Helper()
	for i := range 10 * lim.Burst {
		if d := l.Allow(context.Background(), key, lim); !d.Allowed {
			return i, d
		}
	}
	t.Fatalf("%s never refused", key)
	return 0, ratelimit.Decision{}
}

func TestLimiterInRedisIsSharedAndPerKey(t *testing.T) {
	rdb, _ := startRedis(t)
	lim := ratelimit.Limit{Rate: 1, Burst: 5}
	// Two limiters stand for two replicas over one Redis.
	a := ratelimit.NewLimiter(rdb, ratelimit.LimiterOptions{Policy: "keypair", Timeout: time.Second, LocalKeys: 100, Logger: quiet})
	b := ratelimit.NewLimiter(rdb, ratelimit.LimiterOptions{Policy: "keypair", Timeout: time.Second, LocalKeys: 100, Logger: quiet})
	for i := range 3 {
		if d := a.Allow(context.Background(), "k1", lim); !d.Allowed || d.Remaining != 4-i {
			t.Fatalf("request %d: %+v", i, d)
		}
	}
	passed, refused := exhaust(t, b, "k1", lim)
	if passed != 2 {
		t.Fatalf("replica b passed %d more, want 2 (the burst is shared)", passed)
	}
	if refused.RetryAfter <= 0 || refused.RetryAfter > time.Second || refused.Remaining != 0 {
		t.Fatalf("refusal %+v", refused)
	}
	if got := refused.PolicyField(); got != `"keypair";q=5;w=5` {
		t.Errorf("policy field %s", got)
	}
	if got := refused.StateField(); got != `"keypair";r=0;t=1` {
		t.Errorf("state field %s", got)
	}
	if d := a.Allow(context.Background(), "k2", lim); !d.Allowed {
		t.Fatalf("another key is limited by k1: %+v", d)
	}
}

func TestLimiterFallsBackToLocalCountsWhileRedisIsDownAndReturns(t *testing.T) {
	rdb, srv := startRedis(t)
	c := newClock()
	lim := ratelimit.Limit{Rate: 10, Burst: 3}
	l := ratelimit.NewLimiter(rdb, ratelimit.LimiterOptions{Policy: "keypair", Timeout: 200 * time.Millisecond, LocalKeys: 100, Logger: quiet, Now: c.now})
	if err := srv.Stop(); err != nil {
		t.Fatal(err)
	}
	passed, refused := exhaust(t, l, "k", lim)
	if passed != 3 {
		t.Fatalf("with Redis down %d passed, want the burst of 3", passed)
	}
	if refused.RetryAfter != 100*time.Millisecond {
		t.Fatalf("local refusal %+v", refused)
	}
	c.advance(100 * time.Millisecond)
	if d := l.Allow(context.Background(), "k", lim); !d.Allowed {
		t.Fatalf("one emission interval later: %+v", d)
	}

	if err := srv.Restart(context.Background()); err != nil {
		t.Fatal(err)
	}
	c.advance(time.Second) // the replica tries Redis again
	passed, _ = exhaust(t, l, "k", lim)
	if passed != 3 {
		t.Fatalf("after Redis returned %d passed, want a fresh burst of 3 counted there", passed)
	}
	if n, err := rdb.Exists(context.Background(), "gcra:k").Result(); err != nil || n != 1 {
		t.Fatalf("Redis holds no count for k: %d, %v", n, err)
	}
}

func TestLimiterOff(t *testing.T) {
	l := ratelimit.NewLimiter(nil, ratelimit.LimiterOptions{Policy: "keypair", LocalKeys: 1, Logger: quiet})
	for range 1000 {
		if d := l.Allow(context.Background(), "k", ratelimit.Limit{}); !d.Allowed || !d.Off() {
			t.Fatalf("%+v", d)
		}
	}
}

// A key pair's calls count against its workspace's own limit when it has
// one, the default otherwise; a default that is Off turns both off.
func TestGuardLimitsAKeyPairByItsOwnLimitOrTheDefault(t *testing.T) {
	for _, tc := range []struct {
		name         string
		defaultLimit ratelimit.Limit
		own          ratelimit.Limit
		allowed      int // of 5 calls at once
	}{
		{"default", ratelimit.Limit{Rate: 1, Burst: 2}, ratelimit.Limit{}, 2},
		{"own", ratelimit.Limit{Rate: 1, Burst: 2}, ratelimit.Limit{Rate: 1, Burst: 4}, 4},
		{"off", ratelimit.Limit{}, ratelimit.Limit{Rate: 1, Burst: 1}, 5},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := ratelimit.NewGuard(nil, ratelimit.Settings{Default: tc.defaultLimit}, quiet)
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

func TestLocalLimiterStaysBounded(t *testing.T) {
	c := newClock()
	l := ratelimit.NewLimiter(nil, ratelimit.LimiterOptions{Policy: "keypair", LocalKeys: 2, Logger: quiet, Now: c.now})
	lim := ratelimit.Limit{Rate: 1, Burst: 1}
	for _, k := range []string{"a", "b", "c", "d"} {
		if d := l.Allow(context.Background(), k, lim); !d.Allowed {
			t.Fatalf("%s: %+v", k, d)
		}
	}
}

func TestFailuresBlockTheAddressNotOthers(t *testing.T) {
	rdb, _ := startRedis(t)
	f := ratelimit.NewFailures(rdb, ratelimit.FailuresOptions{
		Limits:  ratelimit.FailureLimits{PerAddress: 20, PerKey: 3, Window: time.Minute},
		Timeout: time.Second, LocalKeys: 100, Logger: quiet,
	})
	ctx := context.Background()
	for range 3 {
		if d := f.Check(ctx, "127.0.0.2", "key-1"); !d.Allowed {
			t.Fatalf("blocked early: %+v", d)
		}
		f.Fail(ctx, "127.0.0.2", "key-1")
	}
	d := f.Check(ctx, "127.0.0.2", "key-1")
	if d.Allowed || d.RetryAfter < 59*time.Second || d.RetryAfter > time.Minute || d.Quota != 3 {
		t.Fatalf("after 3 failures: %+v", d)
	}
	if got := d.PolicyField(); got != `"auth-failures";q=3;w=60` {
		t.Errorf("policy field %s", got)
	}
	if d := f.Check(ctx, "127.0.0.3", "key-1"); !d.Allowed {
		t.Fatalf("another address with the same key is blocked: %+v", d)
	}
	if d := f.Check(ctx, "127.0.0.2", "key-2"); !d.Allowed {
		t.Fatalf("the same address with another key is blocked below the address bound: %+v", d)
	}
	// Spraying many keys from one address reaches the address bound.
	for i := range 17 {
		f.Fail(ctx, "127.0.0.2", "spray-"+string(rune('a'+i)))
	}
	if d := f.Check(ctx, "127.0.0.2", "key-2"); d.Allowed || d.Quota != 20 {
		t.Fatalf("after 20 failures from the address: %+v", d)
	}
	if d := f.Check(ctx, "127.0.0.2", ""); d.Allowed {
		t.Fatalf("a token from the blocked address: %+v", d)
	}
}

func TestFailuresWindowEndsLocally(t *testing.T) {
	c := newClock()
	f := ratelimit.NewFailures(nil, ratelimit.FailuresOptions{
		Limits:    ratelimit.FailureLimits{PerAddress: 2, Window: time.Minute},
		LocalKeys: 100, Logger: quiet, Now: c.now,
	})
	ctx := context.Background()
	f.Fail(ctx, "a", "")
	f.Fail(ctx, "a", "")
	if d := f.Check(ctx, "a", ""); d.Allowed || d.RetryAfter != time.Minute {
		t.Fatalf("%+v", d)
	}
	c.advance(time.Minute)
	if d := f.Check(ctx, "a", ""); !d.Allowed {
		t.Fatalf("after the window: %+v", d)
	}
}
