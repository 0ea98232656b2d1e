package ratelimit

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"
)

// Limit is a rate with a burst: Rate requests a second on average, up to
// Burst at once. A Rate of zero turns limiting off.
type Limit struct {
	Rate  int
	Burst int
}

// Off reports whether the limit turns limiting off.
func (l Limit) Off() bool { return l.Rate <= 0 }

// window is how long an empty burst takes to refill.
func (l Limit) window() time.Duration {
	return time.Duration(l.Burst) * time.Second / time.Duration(l.Rate)
}

// Limiter applies Limits to keys, in Redis when it answers.
type Limiter struct {
	policy  string
	redis   redis.UniversalClient // nil: this replica only
	timeout time.Duration
	local   *localGCRA
	down    *fallback
}

// LimiterOptions configures a Limiter.
type LimiterOptions struct {
	// Policy names the limit in the rate-limit fields ("keypair").
	Policy string
	// Timeout bounds one Redis call; past it the replica counts alone.
	Timeout time.Duration
	// LocalKeys bounds the keys counted locally while Redis is down.
	LocalKeys int
	Logger    *slog.Logger
	// Now is the clock; time.Now when nil.
	Now func() time.Time
}

// NewLimiter returns a limiter over rdb; with a nil rdb it counts on this
// replica only.
func NewLimiter(rdb redis.UniversalClient, o LimiterOptions) *Limiter {
	now := o.Now
	if now == nil {
		now = time.Now
	}
	l := &Limiter{
		policy:  o.Policy,
		redis:   rdb,
		timeout: o.Timeout,
		local:   &localGCRA{now: now, max: max(o.LocalKeys, 1), tat: map[string]time.Time{}},
		down:    &fallback{logger: o.Logger, what: "rate limits", now: now, retryEvery: time.Second},
	}
	return l
}

// Allow counts one request of key against lim.
func (l *Limiter) Allow(ctx context.Context, key string, lim Limit) Decision {
	if lim.Off() {
		return Decision{Allowed: true}
	}
	d := Decision{Policy: l.policy, Quota: lim.Burst, Window: lim.window()}
	if l.redis != nil && l.down.useRedis() {
		c, cancel := context.WithTimeout(context.WithoutCancel(ctx), l.timeout)
		v, err := gcraScript.Run(c, l.redis, []string{gcraKeyPrefix + key}, lim.interval(), lim.Burst).Result()
		cancel()
		if err == nil {
			d, err = gcraAnswer(d, v)
		}
		if err == nil {
			l.down.succeeded()
			return d
		}
		l.down.failed(err)
	}
	return l.local.allow(key, lim, d)
}

// Keyed is a limit and the key it counts under.
type Keyed struct {
	Key   string
	Limit Limit
}

// AllowEach counts one request against each limit in turn (in Redis, one
// script: their keys must share a hash tag), stopping at the first that
// refuses; it answers that limit's index and its decision, or -1 and an
// allowed decision. A limit that refuses counts nothing, and the limits after
// it are not looked at; those before it have counted the request. Every
// limit must be on.
func (l *Limiter) AllowEach(ctx context.Context, limits []Keyed) (int, Decision) {
	if l.redis != nil && l.down.useRedis() {
		keys := make([]string, len(limits))
		args := make([]any, 0, 2*len(limits))
		for i, k := range limits {
			keys[i] = gcraKeyPrefix + k.Key
			args = append(args, k.Limit.interval(), k.Limit.Burst)
		}
		c, cancel := context.WithTimeout(context.WithoutCancel(ctx), l.timeout)
		v, err := gcraEachScript.Run(c, l.redis, keys, args...).Result()
		cancel()
		var i int
		var d Decision
		if err == nil {
			i, d, err = gcraEachAnswer(v, l.policy, limits)
		}
		if err == nil {
			l.down.succeeded()
			return i, d
		}
		l.down.failed(err)
	}
	for i, k := range limits {
		d := l.local.allow(k.Key, k.Limit, Decision{Policy: l.policy, Quota: k.Limit.Burst, Window: k.Limit.window()})
		if !d.Allowed {
			return i, d
		}
	}
	return -1, Decision{Allowed: true}
}

// localGCRA is the same algorithm over this replica's memory: tat is each
// key's theoretical arrival time.
type localGCRA struct {
	mu  sync.Mutex
	now func() time.Time
	max int
	tat map[string]time.Time
}

func (g *localGCRA) allow(key string, lim Limit, d Decision) Decision {
	g.mu.Lock()
	defer g.mu.Unlock()
	now := g.now()
	interval := time.Second / time.Duration(lim.Rate)
	tat, ok := g.tat[key]
	if !ok || tat.Before(now) {
		tat = now
	}
	next := tat.Add(interval)
	allowAt := next.Add(-time.Duration(lim.Burst) * interval)
	if now.Before(allowAt) {
		d.RetryAfter = allowAt.Sub(now)
		d.ResetAfter = tat.Sub(now)
		return d
	}
	if !ok && len(g.tat) >= g.max {
		g.prune(now)
	}
	g.tat[key] = next
	d.Allowed = true
	d.Remaining = int(now.Sub(allowAt) / interval)
	d.ResetAfter = next.Sub(now)
	return d
}

// prune forgets keys whose quota is back in full; if all are busy, it
// forgets them all rather than grow without bound.
func (g *localGCRA) prune(now time.Time) {
	for k, t := range g.tat {
		if !t.After(now) {
			delete(g.tat, k)
		}
	}
	if len(g.tat) >= g.max {
		clear(g.tat)
	}
}
