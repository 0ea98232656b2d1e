package redisstore

import "github.com/redis/go-redis/v9"

// registerLua is the part of registering a token that touches only the
// workspace's slot: it puts the digest in the workspace and user indexes,
// creates the two generation counters at 0 if they are missing (SET NX GET
// answers the value before the call, false in Lua when there was none),
// and makes all four keys live until at least the given instant.
//
// An expiry is only ever moved later: a key gets the new instant when it
// has no expiry (PEXPIRETIME answers -1) or an earlier one. The caller
// rounds the instant up (see keepUntil), so the keys of a busy workspace
// already live long enough on nearly every login, and cost one read each.
// The instant is absolute, the same kind the token's own key gets, so the
// clock of the service that calls does not matter.
//
// KEYS: workspace index, user index, workspace generation, user generation.
// ARGV: digest (hex), keep-until instant (Unix milliseconds).
const registerLua = `
redis.call('SADD', KEYS[1], ARGV[1])
redis.call('SADD', KEYS[2], ARGV[1])
local gen = redis.call('SET', KEYS[3], '0', 'NX', 'GET') or '0'
local ugen = redis.call('SET', KEYS[4], '0', 'NX', 'GET') or '0'
local keep = tonumber(ARGV[2])
for i = 1, 4 do
  if redis.call('PEXPIRETIME', KEYS[i]) < keep then
    redis.call('PEXPIREAT', KEYS[i], keep)
  end
end
`

// registerScript registers a token and returns the two generations it is
// issued under: {workspace generation, user generation}. All its keys share
// the workspace's hash tag, so it runs on one Cluster slot.
var registerScript = redis.NewScript(registerLua + `
return {gen, ugen}
`)

// saveScript registers a token and writes it, in one round trip and
// atomically. Its keys span two slots (the token's key has no hash tag), so
// it serves a single Redis server only (standalone or Sentinel); on any
// other client Save runs registerScript and then writes the token.
//
// KEYS: as registerScript, then the token's key. ARGV: as registerScript,
// then email, workspace id, issued at and expires at (Unix milliseconds).
var saveScript = redis.NewScript(registerLua + `
redis.call('HSET', KEYS[5], 'email', ARGV[3], 'workspaceId', ARGV[4],
  'issuedAt', ARGV[5], 'expiresAt', ARGV[6], 'gen', gen, 'ugen', ugen)
redis.call('PEXPIREAT', KEYS[5], ARGV[6])
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
