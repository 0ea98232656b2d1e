package ratelimit

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"log/slog"
	"strconv"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"
)

// FailureLimits bound failed authentications from one client address in a
// window: PerAddress failures of any credentials, PerKey of one app key. A
// zero bound is not enforced.
type FailureLimits struct {
	PerAddress int
	PerKey     int
	Window     time.Duration
}

// Failures counts failed authentications per client address and per (app
// key, client address), so an address that guesses is refused before any
// credential check while everyone else, even with the same app key, is not.
type Failures struct {
	limits  FailureLimits
	redis   redis.UniversalClient // nil: this replica only
	timeout time.Duration
	local   *localWindows
	down    *fallback
}

// FailuresOptions configures Failures.
type FailuresOptions struct {
	Limits FailureLimits
	// Timeout bounds one Redis call; past it the replica counts alone.
	Timeout time.Duration
	// LocalKeys bounds the counters kept locally while Redis is down.
	LocalKeys int
	Logger    *slog.Logger
	// Now is the clock; time.Now when nil.
	Now func() time.Time
}

// FailurePolicy names the failed-authentication limit in the rate-limit
// fields.
const FailurePolicy = "auth-failures"

// NewFailures returns the counters over rdb; with a nil rdb they are this
// replica's only.
func NewFailures(rdb redis.UniversalClient, o FailuresOptions) *Failures {
	now := o.Now
	if now == nil {
		now = time.Now
	}
	return &Failures{
		limits:  o.Limits,
		redis:   rdb,
		timeout: o.Timeout,
		local:   &localWindows{now: now, max: max(o.LocalKeys, 1), windows: map[string]localWindow{}},
		down:    &fallback{logger: o.Logger, what: "failed-authentication limits", now: now, retryEvery: time.Second},
	}
}

// keys returns the counters of an address and of an app key at that
// address; both share the address's hash tag, so one script may touch both
// in a Redis Cluster. The app key is hashed: it is whatever the caller sent.
func failureKeys(addr, appKey string) []string {
	keys := []string{"authfail:{" + addr + "}"}
	if appKey != "" {
		sum := sha256.Sum256([]byte(appKey))
		keys = append(keys, "authfail:{"+addr+"}:"+hex.EncodeToString(sum[:12]))
	}
	return keys
}

// failScript counts one failure on every key; a key's window starts at its
// first failure. ARGV[1] is the window in milliseconds.
var failScript = redis.NewScript(`
for _, key in ipairs(KEYS) do
  if redis.call('INCR', key) == 1 then
    redis.call('PEXPIRE', key, ARGV[1])
  end
end
return 0`)

// Check tells whether the address (Key of the client address) may try
// credentials now; appKey is the key it presents, empty for a token.
func (f *Failures) Check(ctx context.Context, addr, appKey string) Decision {
	bounds := []int{f.limits.PerAddress, f.limits.PerKey}
	keys := failureKeys(addr, appKey)
	bounds = bounds[:len(keys)]
	d := Decision{Policy: FailurePolicy, Window: f.limits.Window, Allowed: true}
	if f.limits.Window <= 0 || (f.limits.PerAddress <= 0 && f.limits.PerKey <= 0) {
		return Decision{Allowed: true}
	}
	if f.redis != nil && f.down.useRedis() {
		c, cancel := context.WithTimeout(context.WithoutCancel(ctx), f.timeout)
		blocked, ttl, err := f.checkRedis(c, keys, bounds)
		cancel()
		if err == nil {
			f.down.succeeded()
			return f.decide(d, bounds, blocked, ttl)
		}
		f.down.failed(err)
	}
	i, ttl := f.local.check(keys, bounds)
	return f.decide(d, bounds, i, ttl)
}

// checkRedis reads the counters with one MGET (they share a hash tag, so
// one Cluster slot) and returns the index (from 1) of the first at its
// bound, 0 when none is, and that counter's time to live. Every call of
// every method pays this check, so it is a plain read rather than a
// script: the time to live, a second round trip, is read only for a
// refusal.
func (f *Failures) checkRedis(ctx context.Context, keys []string, bounds []int) (int, time.Duration, error) {
	vals, err := f.redis.MGet(ctx, keys...).Result()
	if err != nil {
		return 0, 0, err
	}
	for i, v := range vals {
		s, ok := v.(string)
		if !ok || bounds[i] <= 0 {
			continue // nil: no failures counted
		}
		n, err := strconv.Atoi(s)
		if err != nil {
			return 0, 0, fmt.Errorf("failure counter %s holds %q", keys[i], s)
		}
		if n < bounds[i] {
			continue
		}
		ttl, err := f.redis.PTTL(ctx, keys[i]).Result()
		if err != nil {
			return 0, 0, err
		}
		return i + 1, ttl, nil
	}
	return 0, 0, nil
}

func (f *Failures) decide(d Decision, bounds []int, blocked int, ttl time.Duration) Decision {
	d.Quota = bounds[0]
	if blocked == 0 {
		return d
	}
	d.Quota = bounds[blocked-1]
	d.Allowed = false
	d.RetryAfter = max(ttl, time.Second)
	return d
}

// Fail counts one failed authentication by the address with appKey (empty
// for a token).
func (f *Failures) Fail(ctx context.Context, addr, appKey string) {
	if f.limits.Window <= 0 {
		return
	}
	keys := failureKeys(addr, appKey)
	if f.redis != nil && f.down.useRedis() {
		c, cancel := context.WithTimeout(context.WithoutCancel(ctx), f.timeout)
		err := failScript.Run(c, f.redis, keys, f.limits.Window.Milliseconds()).Err()
		cancel()
		if err == nil {
			f.down.succeeded()
			return
		}
		f.down.failed(err)
	}
	f.local.fail(keys, f.limits.Window)
}

// localWindows are the same counters in this replica's memory.
type localWindows struct {
	mu      sync.Mutex
	now     func() time.Time
	max     int
	windows map[string]localWindow
}

type localWindow struct {
	count int
	ends  time.Time
}

func (l *localWindows) check(keys []string, bounds []int) (int, time.Duration) {
	l.mu.Lock()
	defer l.mu.Unlock()
	now := l.now()
	for i, k := range keys {
		w, ok := l.windows[k]
		if ok && now.Before(w.ends) && bounds[i] > 0 && w.count >= bounds[i] {
			return i + 1, w.ends.Sub(now)
		}
	}
	return 0, 0
}

func (l *localWindows) fail(keys []string, window time.Duration) {
	l.mu.Lock()
	defer l.mu.Unlock()
	now := l.now()
	for _, k := range keys {
		w, ok := l.windows[k]
		if !ok || !now.Before(w.ends) {
			if len(l.windows) >= l.max {
				l.prune(now)
			}
			w = localWindow{ends: now.Add(window)}
		}
		w.count++
		l.windows[k] = w
	}
}

// prune forgets ended windows; if none has ended, it forgets them all
// rather than grow without bound.
func (l *localWindows) prune(now time.Time) {
	for k, w := range l.windows {
		if !now.Before(w.ends) {
			delete(l.windows, k)
		}
	}
	if len(l.windows) >= l.max {
		clear(l.windows)
	}
}
