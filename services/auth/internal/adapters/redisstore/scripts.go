package redisstore

import "github.com/redis/go-redis/v9"

// registerLua is the part of saving a token that touches only the
// workspace's slot: it creates the two generation counters at 0 if they
// are missing (SET NX GET answers the value before the call, false in Lua
// when there was none) and makes both live until at least the given
// instant.
//
// An expiry is only ever moved later: a counter gets the new instant when
// it has no expiry (PEXPIRETIME answers -1) or an earlier one. The caller
// rounds the instant up (see keepUntil), so the counters of a busy
// workspace already live long enough on nearly every login, and cost one
// read each. The instant is absolute, the same kind the token's own key
// gets, so the clock of the service that calls does not matter.
//
// KEYS: workspace generation, user generation.
// ARGV: keep-until instant (Unix milliseconds), then what saveScript uses.
const registerLua = `
local gen = redis.call('SET', KEYS[1], '0', 'NX', 'GET') or '0'
local ugen = redis.call('SET', KEYS[2], '0', 'NX', 'GET') or '0'
local keep = tonumber(ARGV[1])
for i = 1, 2 do
  if redis.call('PEXPIRETIME', KEYS[i]) < keep then
    redis.call('PEXPIREAT', KEYS[i], keep)
  end
end
`

// registerScript reads the two generations a token is issued under,
// {workspace generation, user generation}, creating and keeping the
// counters as registerLua says. Its keys share the workspace's hash tag,
// so it runs on one Cluster slot.
var registerScript = redis.NewScript(registerLua + `
return {gen, ugen}
`)

// saveScript registers a token and writes it, in one round trip and
// atomically. Its keys span two slots (the token's key has no hash tag),
// so it serves a single Redis server only (standalone or Sentinel); on any
// other client Save runs registerScript and then writes the token.
//
// KEYS: as registerScript, then the token's key. ARGV: as registerScript,
// then the value's session part (sessionSuffix) and the expiry instant
// (Unix milliseconds).
var saveScript = redis.NewScript(registerLua + `
redis.call('SET', KEYS[3], '` + valueVersion + ` ' .. gen .. ' ' .. ugen .. ' ' .. ARGV[2], 'PXAT', ARGV[3])
return {gen, ugen}
`)

// bumpScript advances a revocation generation, which revokes at once every
// token issued under the previous one. INCR keeps an existing expiry (the
// counter already outlives the tokens it guards); a counter that INCR has
// just created guards no token yet and gets the given life.
//
// KEYS: the generation. ARGV: life in milliseconds for a new counter.
var bumpScript = redis.NewScript(`
local g = redis.call('INCR', KEYS[1])
redis.call('PEXPIRE', KEYS[1], ARGV[1], 'NX')
return g
`)
