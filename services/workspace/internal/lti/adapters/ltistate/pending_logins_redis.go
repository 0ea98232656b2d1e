package ltistate

import (
	"context"
	"fmt"
	"math"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/liveproctor/workspaces/pkg/fault"
	"github.com/liveproctor/workspaces/pkg/redisconn"
)

// PendingLoginsKey is the Redis key that counts the LTI 1.3 logins started
// and not yet launched, across every replica: a hash whose fields are
// bucket numbers (Redis's clock in pendingBucket steps) and whose values
// are the logins started in that bucket and still pending. One key, so
// the count is one command's work on a Cluster too.
const PendingLoginsKey = "lti13:pending"

// pendingBucket is the width of a bucket: a login's slot frees at most
// this much later than the login expires (when its launch never comes, or
// the replica stopped between counting it and storing it), and the hash
// holds TTL / pendingBucket fields at most.
const pendingBucket = 10 * time.Second

// pendingLoginsScript counts one more pending login, or refuses it.
// ARGV: the cap, the logins' TTL and the bucket width, in milliseconds.
// Buckets whose logins have all expired are dropped and the rest summed;
// at the cap it answers {0, ms until the oldest bucket frees}, else it
// counts the login in the current bucket and answers {1, bucket}. The
// hash expires when its newest bucket would be dropped, so an idle one
// does not linger. Redis's TIME, so every replica counts on one clock.
var pendingLoginsScript = redis.NewScript(`
local max, ttl, width = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3])
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local current = math.floor(now / width)
local fields = redis.call('HGETALL', KEYS[1])
local pending, oldest = 0, nil
for i = 1, #fields, 2 do
  local bucket, n = tonumber(fields[i]), tonumber(fields[i + 1])
  if (bucket + 1) * width + ttl <= now or n <= 0 then
    redis.call('HDEL', KEYS[1], fields[i])
  else
    pending = pending + n
    if oldest == nil or bucket < oldest then oldest = bucket end
  end
end
if pending >= max then
  return {0, (oldest + 1) * width + ttl - now}
end
redis.call('HINCRBY', KEYS[1], current, 1)
redis.call('PEXPIREAT', KEYS[1], (current + 1) * width + ttl)
return {1, current}`)

// releaseScript gives back one slot of bucket ARGV[1], if the bucket is
// still counted: a bucket already dropped gave its slots back with it.
var releaseScript = redis.NewScript(`
local n = tonumber(redis.call('HGET', KEYS[1], ARGV[1]))
if n == nil then return 0 end
if n <= 1 then
  redis.call('HDEL', KEYS[1], ARGV[1])
else
  redis.call('HINCRBY', KEYS[1], ARGV[1], -1)
end
return 1`)

// pendingLogins caps the logins pending across every replica.
type pendingLogins struct {
	rdb redis.UniversalClient
	max int
}

// acquire counts one login pending for ttl and returns its bucket, or
// refuses it at the cap (errLoginsPending).
func (p pendingLogins) acquire(ctx context.Context, ttl time.Duration) (int64, error) {
	answer, err := pendingLoginsScript.Run(ctx, p.rdb, []string{PendingLoginsKey},
		p.max, ttl.Milliseconds(), pendingBucket.Milliseconds()).Int64Slice()
	if err != nil {
		return 0, redisconn.Outage("count the pending LTI 1.3 logins", err, errLoginsUnavailable)
	}
	if len(answer) != 2 {
		return 0, fault.New(fault.Internal, "count the pending LTI 1.3 logins: the script answered %v", answer)
	}
	if answer[0] == 0 {
		return 0, errLoginsPending(time.Duration(answer[1]) * time.Millisecond)
	}
	return answer[1], nil
}

// release gives back the slot a login took in bucket. It is best effort:
// a slot not given back frees when its bucket is dropped, at most
// pendingBucket after the login would have expired.
func (p pendingLogins) release(ctx context.Context, bucket int64) {
	_ = releaseScript.Run(ctx, p.rdb, []string{PendingLoginsKey}, bucket).Err()
}

// errLoginsPending refuses a login at the cap: the service is busy, not
// the caller at fault, so Unavailable, with when a slot frees.
func errLoginsPending(wait time.Duration) error {
	seconds := max(1, int(math.Ceil(wait.Seconds())))
	return &fault.Error{
		Kind:       fault.Unavailable,
		Message:    fmt.Sprintf("too many LTI 1.3 logins are pending: launch again in %d s", seconds),
		RetryAfter: time.Duration(seconds) * time.Second,
	}
}
