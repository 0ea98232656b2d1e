package redisstore

import (
	"errors"
	"fmt"

	"github.com/redis/go-redis/v9"

	"github.com/liveproctor/workspaces/pkg/fault"
)

// storeError turns a Redis error into a fault. An error Redis itself
// answered (a script error, a wrong type) is Internal, except those that
// mean "not now" (a cluster or replica that is down or loading); anything
// else (refused or dropped connections, timeouts, an exhausted pool, a
// cancelled context) means Redis cannot be reached: Unavailable.
func storeError(op string, err error) error {
	wrapped := fmt.Errorf("%s: %w", op, err)
	var reply redis.Error
	if errors.As(err, &reply) && !transient(err) {
		return fault.Wrap(fault.Internal, wrapped, "internal error")
	}
	return fault.Wrap(fault.Unavailable, wrapped, "the token store is unavailable; retry shortly")
}

func transient(err error) bool {
	for _, prefix := range []string{"CLUSTERDOWN", "LOADING", "TRYAGAIN", "MASTERDOWN", "READONLY"} {
		if redis.HasErrorPrefix(err, prefix) {
			return true
		}
	}
	return false
}
