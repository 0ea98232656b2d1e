package redisstore

import (
	"errors"
	"fmt"

	"github.com/redis/go-redis/v9"

	"github.com/liveproctor/workspaces/pkg/fault"
)

// storeError turns a Redis error into a fault.
//
// redis.Nil (no such key) is domain.ErrTokenNotFound's business and is
// handled where it can occur, never here. An error Redis itself answered
// (a script error, a wrong type, CROSSSLOT) is a bug: Internal. Replies
// that mean "not now" (a Cluster that is down or resharding, a replica
// that is loading or read-only after a failover) and everything that is
// not a reply (refused or dropped connections, dial and read timeouts,
// "redis: connection pool timeout", an expired or cancelled context, a
// closed client) mean the store cannot be used right now: Unavailable.
func storeError(op string, err error) error {
	wrapped := fmt.Errorf("%s: %w", op, err)
	var reply redis.Error
	if errors.As(err, &reply) && !transient(err) {
		return fault.Wrap(fault.Internal, wrapped, "internal error")
	}
	return fault.Wrap(fault.Unavailable, wrapped, "the token store is unavailable; retry shortly")
}

// transient reports whether a Redis reply says "retry later".
func transient(err error) bool {
	for _, prefix := range []string{"CLUSTERDOWN", "LOADING", "TRYAGAIN", "MASTERDOWN", "READONLY"} {
		if redis.HasErrorPrefix(err, prefix) {
			return true
		}
	}
	return false
}
