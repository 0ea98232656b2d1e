package ratelimit

import (
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"
)

// The limits' Redis work is written as Lua functions, so that a script of
// another package can run them before its own work, in the same round
// trip (see Planned). Each script that uses them starts with their text.

// gcraLua defines gcra(key, interval, burst): one request against a
// generic cell rate limit that allows one request per interval on average
// and burst at once. The key holds the theoretical arrival time (TAT) of
// the next request, in microseconds of Redis's own clock, so every replica
// counts on one clock. It answers {allowed (1 or 0), remaining, retry
// after, reset after}, the durations in microseconds; a refusal changes
// nothing. The algorithm is localGCRA's (limiter.go), step for step.
const gcraLua = `
local function gcra(key, interval, burst)
  local t = redis.call('TIME')
  local now = tonumber(t[1]) * 1000000 + tonumber(t[2])
  local tat = tonumber(redis.call('GET', key)) or now
  if tat < now then tat = now end
  local nxt = tat + interval
  local allow_at = nxt - burst * interval
  if now < allow_at then
    return {0, 0, allow_at - now, tat - now}
  end
  redis.call('SET', key, string.format('%d', nxt), 'PX', math.max(1, math.ceil((nxt - now) / 1000)))
  return {1, math.floor((now - allow_at) / interval), 0, nxt - now}
end
`

// failuresLua defines failure_block(keys, bounds): the index (from 1) of
// the first failure counter at or over its bound (a bound of 0 is not
// enforced) and that counter's time to live in milliseconds; 0, 0 when
// none is.
const failuresLua = `
local function failure_block(keys, bounds)
  for i = 1, #keys do
    local bound = tonumber(bounds[i])
    if bound > 0 then
      local n = tonumber(redis.call('GET', keys[i])) or 0
      if n >= bound then return i, redis.call('PTTL', keys[i]) end
    end
  end
  return 0, 0
end
`

// gcraScript is gcra on its own. KEYS: the limit's key. ARGV: interval
// and burst.
var gcraScript = redis.NewScript(gcraLua + `
return gcra(KEYS[1], tonumber(ARGV[1]), tonumber(ARGV[2]))
`)

// gcraEachScript is gcra over each key in turn, up to the first that
// refuses. KEYS: the limits' keys. ARGV: each limit's interval and burst.
// It answers the refusing key's index (from 1; 0 when every key allowed)
// followed by gcra's answer for it.
var gcraEachScript = redis.NewScript(gcraLua + `
for i = 1, #KEYS do
  local r = gcra(KEYS[i], tonumber(ARGV[2 * i - 1]), tonumber(ARGV[2 * i]))
  if r[1] == 0 then return {i, r[1], r[2], r[3], r[4]} end
end
return {0, 1, 0, 0, 0}
`)

// gcraKeyPrefix starts the key of every limit in Redis.
const gcraKeyPrefix = "gcra:"

// interval is the limit's emission interval in microseconds: at most a
// million requests a second (ReadSettings), so never below one.
func (l Limit) interval() int64 { return max(int64(time.Second/time.Microsecond)/int64(l.Rate), 1) }

// gcraEachAnswer is AllowEach's answer from gcraEachScript's.
func gcraEachAnswer(v any, policy string, limits []Keyed) (int, Decision, error) {
	vals, ok := v.([]any)
	if !ok || len(vals) != 5 {
		return 0, Decision{}, fmt.Errorf("rate limit script answered %v", v)
	}
	i, ok := vals[0].(int64)
	if !ok || i < 0 || i > int64(len(limits)) {
		return 0, Decision{}, fmt.Errorf("rate limit script answered %v", v)
	}
	if i == 0 {
		return -1, Decision{Allowed: true}, nil
	}
	lim := limits[i-1].Limit
	d, err := gcraAnswer(Decision{Policy: policy, Quota: lim.Burst, Window: lim.window()}, vals[1:])
	return int(i - 1), d, err
}

// gcraAnswer fills d from gcra's answer.
func gcraAnswer(d Decision, v any) (Decision, error) {
	vals, ok := v.([]any)
	if !ok || len(vals) != 4 {
		return d, fmt.Errorf("rate limit script answered %v", v)
	}
	var n [4]int64
	for i, x := range vals {
		if n[i], ok = x.(int64); !ok {
			return d, fmt.Errorf("rate limit script answered %v", v)
		}
	}
	d.Allowed = n[0] == 1
	d.Remaining = int(n[1])
	d.RetryAfter = time.Duration(n[2]) * time.Microsecond
	d.ResetAfter = time.Duration(n[3]) * time.Microsecond
	return d, nil
}
