package redisstore

import (
	"fmt"

	"github.com/redis/go-redis/v9"

	"github.com/liveproctor/workspaces/pkg/ratelimit"
)

// registerLua defines register(wgen, ugen, keep), the part of saving a
// token that touches only the workspace's slot: it creates the two
// generation counters at 0 if they are missing (SET NX GET answers the
// value before the call, false in Lua when there was none), makes both
// live until at least keep (Unix milliseconds), and answers their values.
//
// An expiry is only ever moved later: a counter gets the new instant when
// it has no expiry (PEXPIRETIME answers -1) or an earlier one. The caller
// rounds the instant up (see keepUntil), so the counters of a busy
// workspace already live long enough on nearly every login, and cost one
// read each. The instant is absolute, the same kind the token's own key
// gets, so the clock of the service that calls does not matter.
const registerLua = `
local function register(wgen, ugen, keep)
  local gen = redis.call('SET', wgen, '0', 'NX', 'GET') or '0'
  local ugn = redis.call('SET', ugen, '0', 'NX', 'GET') or '0'
  for _, key in ipairs({wgen, ugen}) do
    if redis.call('PEXPIRETIME', key) < keep then
      redis.call('PEXPIREAT', key, keep)
    end
  end
  return gen, ugn
end
`

// writeLua writes a token's key: the value (version 2, see value.go) from
// the generations and the session part (sessionSuffix), expiring at exp
// (Unix milliseconds), which the value itself holds only as a life. Given
// a launch key (lkey, nil for any session no LTI 1.3 launch opened), it
// writes the launch id there with the same expiry.
const writeLua = `
local function write(key, gen, ugen, session, exp, lkey, launch)
  redis.call('SET', key, '` + valueVersion + ` ' .. gen .. ' ' .. ugen .. ' ' .. session, 'PXAT', exp)
  if lkey then
    redis.call('SET', lkey, launch, 'PXAT', exp)
  end
end
`

// registerScript reads the two generations a token is issued under,
// {workspace generation, user generation}, creating and keeping the
// counters as register does. Its keys share the workspace's hash tag, so
// it runs on one Cluster slot.
//
// KEYS: workspace generation, user generation. ARGV: keep-until instant.
var registerScript = redis.NewScript(registerLua + `
local gen, ugen = register(KEYS[1], KEYS[2], tonumber(ARGV[1]))
return {gen, ugen}
`)

// saveScript registers a token and writes it, in one round trip and
// atomically. Its keys span two slots (the token's key has no hash tag),
// so it serves a single Redis server only (standalone or Sentinel); on any
// other client Save runs registerScript and then writes the token.
//
// KEYS: as registerScript, then the token's key and, for a session an LTI
// 1.3 launch opened, its launch key. ARGV: as registerScript, then the
// value's session part (sessionSuffix: issuedAt, life, workspace and
// email), the expiry instant (Unix milliseconds) and the launch id, if
// any (see Store.saveArgs).
var saveScript = redis.NewScript(registerLua + writeLua + `
local gen, ugen = register(KEYS[1], KEYS[2], tonumber(ARGV[1]))
write(KEYS[3], gen, ugen, ARGV[2], ARGV[3], KEYS[4], ARGV[4])
return {gen, ugen}
`)

// guardedSaveScript checks a login's limits (ratelimit.GuardLua: the
// failure counters of the client's address, then the key pair's rate) and
// only when they let it pass registers and writes the token, as saveScript
// does: one round trip for all of a login's Redis work. A single Redis
// server only, like saveScript. It answers guard's verdict.
//
// KEYS: guard's, then saveScript's. ARGV: guard's, then saveScript's.
var guardedSaveScript = redis.NewScript(ratelimit.GuardLua + registerLua + writeLua + fmt.Sprintf(`
local verdict = guard(1, 1)
if verdict[1] ~= 'ok' then return verdict end
local gen, ugen = register(KEYS[%[1]d + 1], KEYS[%[1]d + 2], tonumber(ARGV[%[2]d + 1]))
write(KEYS[%[1]d + 3], gen, ugen, ARGV[%[2]d + 2], ARGV[%[2]d + 3], KEYS[%[1]d + 4], ARGV[%[2]d + 4])
return verdict
`, ratelimit.GuardKeys, ratelimit.GuardArgs))

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
