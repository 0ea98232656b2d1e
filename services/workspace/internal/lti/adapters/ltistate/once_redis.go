package ltistate

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/liveproctor/workspaces/pkg/fault"
	"github.com/liveproctor/workspaces/pkg/redisconn"
)

// redisOnce keeps records of type R in Redis under bearer ids, each usable
// once, shared by every replica: the Redis stores' common part. A record
// is JSON, so a reader of Redis sees what it is, under prefix plus the
// SHA-256 of its id (the id is a secret a browser holds; the key names its
// digest only), written with SET PX, read with GET and taken with GETDEL,
// so of two callers presenting one id only one gets the record. One key
// per command, so it works on a Cluster.
type redisOnce[R any] struct {
	rdb    redis.UniversalClient
	prefix string // "lti13:login:"
	what   string // "an LTI 1.3 login", for errors
	// unavailable is the caller's message while Redis cannot be reached or
	// refuses the command (full, read-only: redisconn.Outage).
	unavailable string
}

// onceKey is the Redis key of id under prefix.
func onceKey(prefix, id string) string {
	sum := sha256.Sum256([]byte(id))
	return prefix + hex.EncodeToString(sum[:])
}

func (s redisOnce[R]) put(ctx context.Context, id string, rec R, ttl time.Duration) error {
	value, err := json.Marshal(rec)
	if err != nil {
		return fault.Wrap(fault.Internal, err, "store "+s.what)
	}
	if err := s.rdb.Set(ctx, onceKey(s.prefix, id), value, ttl).Err(); err != nil {
		return redisconn.Outage("store "+s.what, err, s.unavailable)
	}
	return nil
}

// get returns the record under id and leaves it (GET).
func (s redisOnce[R]) get(ctx context.Context, id string) (R, bool, error) {
	return s.record(s.rdb.Get(ctx, onceKey(s.prefix, id)), "read")
}

// take returns the record under id and removes it (GETDEL).
func (s redisOnce[R]) take(ctx context.Context, id string) (R, bool, error) {
	return s.record(s.rdb.GetDel(ctx, onceKey(s.prefix, id)), "take")
}

// record decodes the answer of a GET or GETDEL (verb, for errors).
func (s redisOnce[R]) record(cmd *redis.StringCmd, verb string) (R, bool, error) {
	var rec R
	value, err := cmd.Bytes()
	switch {
	case errors.Is(err, redis.Nil):
		return rec, false, nil
	case err != nil:
		return rec, false, redisconn.Outage(verb+" "+s.what, err, s.unavailable)
	}
	if err := json.Unmarshal(value, &rec); err != nil {
		return rec, false, fault.Wrap(fault.Internal, err, "read "+s.what)
	}
	return rec, true, nil
}
