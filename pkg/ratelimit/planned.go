package ratelimit

import (
	"context"
	"fmt"
	"time"

	"github.com/liveproctor/workspaces/pkg/fault"
)

// GuardLua defines guard(k, a) for scripts that check a key-pair call's
// limits and do the call's own Redis work in one round trip (Planned). It
// reads the failure counters of the client's address KEYS[k] and of the app
// key there KEYS[k+1] against the bounds ARGV[a] and ARGV[a+1], then counts
// the call against the rate limit KEYS[k+2] with interval ARGV[a+2] (0:
// limits off) and burst ARGV[a+3]. It answers a table that starts with
// 'ok' when the call may go on; the script returns that table, whatever it
// does next, for Planned.Settle to read.
const GuardLua = failuresLua + gcraLua + `
local function guard(k, a)
  local i, ttl = failure_block({KEYS[k], KEYS[k + 1]}, {ARGV[a], ARGV[a + 1]})
  if i > 0 then return {'failures', i, ttl} end
  local interval = tonumber(ARGV[a + 2])
  if interval > 0 then
    local r = gcra(KEYS[k + 2], interval, tonumber(ARGV[a + 3]))
    if r[1] == 0 then return {'rate', r[1], r[2], r[3], r[4]} end
    return {'ok', r[1], r[2], r[3], r[4]}
  end
  return {'ok'}
end
`

// GuardKeys and GuardArgs are how many keys and arguments guard reads.
const (
	GuardKeys = 3
	GuardArgs = 4
)

// Planned is the limits of one call of a key pair whose credentials are
// already known good, planned to run inside the script that does the
// call's own work: the failure check of the client's address and the key
// pair's rate limit, in that order, as CheckFailures and LimitKeyPair
// would do them. Its keys do not share a hash tag with each other or with
// the caller's, so such a script serves a single Redis server; elsewhere
// the caller runs Separately instead.
type Planned struct {
	g      *Guard
	appKey string
	own    Limit
	keys   []string
	bounds []int
	lim    Limit // Off: no rate limit
}

// Plan returns the limits of a call by appKey (whose workspace's own
// limit is own) from the call's client address.
func (g *Guard) Plan(ctx context.Context, appKey string, own Limit) Planned {
	p := Planned{g: g, appKey: appKey, own: own}
	p.keys = failureKeys(address(ctx), appKey)
	p.bounds = []int{g.settings.Failures.PerAddress, g.settings.Failures.PerKey}
	if g.settings.Failures.Window <= 0 {
		p.bounds = []int{0, 0}
	}
	if len(p.keys) == 1 { // no app key: one counter, twice, the second unbounded
		p.keys = append(p.keys, p.keys[0])
		p.bounds[1] = 0
	}
	key, lim := g.keyPairLimit(appKey, own)
	p.lim = lim
	p.keys = append(p.keys, gcraKeyPrefix+key)
	return p
}

// Keys are guard's keys, in its order.
func (p Planned) Keys() []string { return p.keys }

// Args are guard's arguments, in its order.
func (p Planned) Args() []any {
	var interval int64
	if !p.lim.Off() {
		interval = p.lim.interval()
	}
	return []any{p.bounds[0], p.bounds[1], interval, p.lim.Burst}
}

// Settle reads guard's answer: nil when the call may go on, else the
// refusal CheckFailures or LimitKeyPair would have given. It sends the
// rate-limit fields, as they do. An answer guard cannot give is Internal.
func (p Planned) Settle(ctx context.Context, answer any) error {
	vals, ok := answer.([]any)
	if !ok || len(vals) == 0 {
		return badAnswer(answer)
	}
	verdict, _ := vals[0].(string)
	switch {
	case verdict == "failures" && len(vals) == 3:
		i, ok1 := vals[1].(int64)
		ttl, ok2 := vals[2].(int64)
		if !ok1 || !ok2 || i < 1 || int(i) > len(p.bounds) {
			return badAnswer(answer)
		}
		d := Decision{Policy: FailurePolicy, Window: p.g.settings.Failures.Window, Allowed: true}
		return failureAnswer(ctx, p.g.failures.decide(d, p.bounds, int(i), time.Duration(ttl)*time.Millisecond))
	case (verdict == "ok" || verdict == "rate") && len(vals) == 5:
		d, err := gcraAnswer(Decision{Policy: p.g.limiter.policy, Quota: p.lim.Burst, Window: p.lim.window()}, vals[1:])
		if err != nil {
			return badAnswer(answer)
		}
		return rateAnswer(ctx, d, p.lim)
	case verdict == "ok" && len(vals) == 1 && p.lim.Off():
		return nil
	}
	return badAnswer(answer)
}

func badAnswer(answer any) error {
	return fault.Wrap(fault.Internal, fmt.Errorf("the limits' script answered %v", answer), "internal error")
}

// Separately checks the limits with calls of their own, for a Redis where
// one script cannot reach the keys (a Cluster), or none at all.
func (p Planned) Separately(ctx context.Context) error {
	if err := p.g.CheckFailures(ctx, p.appKey); err != nil {
		return err
	}
	return p.g.LimitKeyPair(ctx, p.appKey, p.own)
}
