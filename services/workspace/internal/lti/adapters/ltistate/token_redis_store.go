package ltistate

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/liveproctor/workspaces/pkg/fault"
	"github.com/liveproctor/workspaces/pkg/redisconn"
	ltiapp "github.com/liveproctor/workspaces/services/workspace/internal/lti/app"
)

// RedisPlatformTokens keeps the tool's access tokens to platforms where
// every replica finds them: a token is a hash under
// {lti13:token:<key>}:value (token, scopes, useUntil and renewAt in Unix
// milliseconds) expiring at its useUntil, and the fetch lock a string
// under {lti13:token:<key>}:lock holding its owner, written with SET NX PX.
// The two share a hash tag, so the scripts that touch both run on one
// Cluster slot. The key is the application's digest of the registration
// and scope set. The tokens are kept as they are (a service call needs
// them), so this Redis is as secret as the platforms' services.
type RedisPlatformTokens struct {
	rdb redis.UniversalClient
}

var _ ltiapp.PlatformTokenStore = (*RedisPlatformTokens)(nil)

// NewRedisPlatformTokens returns a store over rdb.
func NewRedisPlatformTokens(rdb redis.UniversalClient) *RedisPlatformTokens {
	return &RedisPlatformTokens{rdb: rdb}
}

const tokensUnavailable = "the platform's access tokens cannot be read right now (their store is unavailable); retry shortly"

func tokenValueKey(key string) string { return "{lti13:token:" + key + "}:value" }
func tokenLockKey(key string) string  { return "{lti13:token:" + key + "}:lock" }

// Get returns the token under key.
func (s *RedisPlatformTokens) Get(ctx context.Context, key string) (ltiapp.PlatformToken, bool, error) {
	v, err := s.rdb.HMGet(ctx, tokenValueKey(key), "token", "scopes", "useUntil", "renewAt").Result()
	if err != nil {
		return ltiapp.PlatformToken{}, false, redisconn.Outage("read an LTI access token", err, tokensUnavailable)
	}
	token, _ := v[0].(string)
	scopes, _ := v[1].(string)
	useUntil, errUse := millis(v[2])
	renewAt, errRenew := millis(v[3])
	if token == "" {
		return ltiapp.PlatformToken{}, false, nil
	}
	if err := errors.Join(errUse, errRenew); err != nil {
		return ltiapp.PlatformToken{}, false, fault.Wrap(fault.Internal, err, "read an LTI access token")
	}
	return ltiapp.PlatformToken{AccessToken: token, Scopes: strings.Fields(scopes), UseUntil: useUntil, RenewAt: renewAt}, true, nil
}

// millis reads a time stored in Unix milliseconds.
func millis(v any) (time.Time, error) {
	s, _ := v.(string)
	ms, err := strconv.ParseInt(s, 10, 64)
	return time.UnixMilli(ms), err
}

// Lock takes key's lock for owner for ttl.
func (s *RedisPlatformTokens) Lock(ctx context.Context, key, owner string, ttl time.Duration) (bool, error) {
	ok, err := s.rdb.SetNX(ctx, tokenLockKey(key), owner, ttl).Result()
	if err != nil {
		return false, redisconn.Outage("lock an LTI access token's fetch", err, tokensUnavailable)
	}
	return ok, nil
}

// putTokenScript stores the token until its useUntil (ARGV[5], a PX) and
// deletes the lock if ARGV[1] still owns it: a token fetched by a holder
// whose lock expired is as good as any, and kept too.
var putTokenScript = redis.NewScript(`
redis.call('HSET', KEYS[1], 'token', ARGV[2], 'scopes', ARGV[3], 'useUntil', ARGV[4], 'renewAt', ARGV[6])
redis.call('PEXPIRE', KEYS[1], ARGV[5])
if redis.call('GET', KEYS[2]) == ARGV[1] then redis.call('DEL', KEYS[2]) end
return 1`)

// Put stores t under key and releases owner's lock.
func (s *RedisPlatformTokens) Put(ctx context.Context, key, owner string, t ltiapp.PlatformToken) error {
	ttl := time.Until(t.UseUntil).Milliseconds()
	if ttl <= 0 {
		return s.Unlock(ctx, key, owner)
	}
	err := putTokenScript.Run(ctx, s.rdb, []string{tokenValueKey(key), tokenLockKey(key)},
		owner, t.AccessToken, strings.Join(t.Scopes, " "), t.UseUntil.UnixMilli(), ttl, t.RenewAt.UnixMilli()).Err()
	if err != nil {
		return redisconn.Outage("store an LTI access token", err, tokensUnavailable)
	}
	return nil
}

// unlockScript deletes KEYS[1] if it holds ARGV[1].
var unlockScript = redis.NewScript(`
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0`)

// Unlock releases key's lock if owner holds it.
func (s *RedisPlatformTokens) Unlock(ctx context.Context, key, owner string) error {
	if err := unlockScript.Run(ctx, s.rdb, []string{tokenLockKey(key)}, owner).Err(); err != nil {
		return redisconn.Outage("unlock an LTI access token's fetch", err, tokensUnavailable)
	}
	return nil
}

// dropTokenScript deletes the token hash KEYS[1] if its token is ARGV[1].
var dropTokenScript = redis.NewScript(`
if redis.call('HGET', KEYS[1], 'token') == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0`)

// Drop removes the token under key if it is still accessToken.
func (s *RedisPlatformTokens) Drop(ctx context.Context, key, accessToken string) error {
	if err := dropTokenScript.Run(ctx, s.rdb, []string{tokenValueKey(key)}, accessToken).Err(); err != nil {
		return redisconn.Outage("drop an LTI access token", err, tokensUnavailable)
	}
	return nil
}
