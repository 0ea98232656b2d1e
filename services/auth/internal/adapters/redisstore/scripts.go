package redisstore

import "github.com/redis/go-redis/v9"

// registerScript puts a token's digest in its workspace and user indexes,
// makes sure both indexes and both generation counters live at least as
// long as the token (never shortening a longer life), and returns the
// generations the token is issued under. All four keys share one slot.
//
// KEYS: workspace index, user index, workspace generation, user generation.
// ARGV: digest, time to live in milliseconds.
var registerScript = redis.NewScript(`
redis.call('SADD', KEYS[1], ARGV[1])
redis.call('SADD', KEYS[2], ARGV[1])
local ttl = tonumber(ARGV[2])
for i = 3, 4 do
  if redis.call('EXISTS', KEYS[i]) == 0 then
    redis.call('SET', KEYS[i], '0')
  end
end
for i = 1, 4 do
  if redis.call('PTTL', KEYS[i]) < ttl then
    redis.call('PEXPIRE', KEYS[i], ttl)
  end
end
return {redis.call('GET', KEYS[3]), redis.call('GET', KEYS[4])}
`)

// saveScript does what registerScript does and then writes the token, in
// one round trip. It names keys of two slots, so it serves a single Redis
// server (standalone or Sentinel) only; on a Cluster, Save runs the two
// steps separately.
//
// KEYS: workspace index, user index, workspace generation, user generation,
// token. ARGV: digest, index time to live in milliseconds, email,
// workspace id, issued at and expires at (Unix milliseconds).
var saveScript = redis.NewScript(`
redis.call('SADD', KEYS[1], ARGV[1])
redis.call('SADD', KEYS[2], ARGV[1])
local ttl = tonumber(ARGV[2])
for i = 3, 4 do
  if redis.call('EXISTS', KEYS[i]) == 0 then
    redis.call('SET', KEYS[i], '0')
  end
end
for i = 1, 4 do
  if redis.call('PTTL', KEYS[i]) < ttl then
    redis.call('PEXPIRE', KEYS[i], ttl)
  end
end
redis.call('HSET', KEYS[5], 'email', ARGV[3], 'workspaceId', ARGV[4], 'iat', ARGV[5], 'exp', ARGV[6],
  'gen', redis.call('GET', KEYS[3]), 'ugen', redis.call('GET', KEYS[4]))
redis.call('PEXPIREAT', KEYS[5], ARGV[6])
return 1
`)

// bumpScript advances a revocation generation, which revokes every token
// issued under the old one at once, and keeps the counter alive at least
// as long as any token issued from now on could be.
//
// KEYS: the generation. ARGV: time to live in milliseconds.
var bumpScript = redis.NewScript(`
local g = redis.call('INCR', KEYS[1])
if redis.call('PTTL', KEYS[1]) < tonumber(ARGV[1]) then
  redis.call('PEXPIRE', KEYS[1], ARGV[1])
end
return g
`)
