package ltistate

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/liveproctor/workspaces/pkg/redisconn"
	ltiapp "github.com/liveproctor/workspaces/services/workspace/internal/lti/app"
)

// RedisNonces keeps each nonce as its own key, written with SET NX and an
// expiry. One key per command, so it works on a Cluster; the consumer key is
// the hash tag all the nonces of one LMS registration share.
type RedisNonces struct {
	rdb redis.UniversalClient
}

var _ ltiapp.NonceStore = (*RedisNonces)(nil)

// NewRedisNonces returns a store over rdb.
func NewRedisNonces(rdb redis.UniversalClient) *RedisNonces { return &RedisNonces{rdb: rdb} }

// errUnavailable: without the store a replay cannot be ruled out, so the
// launch is refused.
const errUnavailable = "LTI launches cannot be checked for replays right now (the nonce store is unavailable); retry shortly"

// Use records nonce for consumerKey for ttl; false when it was already
// recorded.
func (s *RedisNonces) Use(ctx context.Context, consumerKey, nonce string, ttl time.Duration) (bool, error) {
	ok, err := s.rdb.SetNX(ctx, NonceKey(consumerKey, nonce), 1, ttl).Result()
	if err != nil {
		return false, redisconn.Outage("record an LTI nonce", err, errUnavailable)
	}
	return ok, nil
}

// NonceKey is the Redis key of a nonce: lti:nonce:{<consumer key>}:<the first
// 32 hex digits of SHA-256(nonce)>, so a nonce of any length makes a short
// key.
func NonceKey(consumerKey, nonce string) string {
	sum := sha256.Sum256([]byte(nonce))
	return "lti:nonce:{" + consumerKey + "}:" + hex.EncodeToString(sum[:16])
}
