package redisstore

import (
	"github.com/liveproctor/workspaces/pkg/redisconn"
)

// storeError turns a Redis error into a fault: the token store is
// unavailable, whether Redis could not be reached or refused the command
// (out of memory, a read-only replica, any error reply: redisconn.Outage).
// redis.Nil (no such key) is domain.ErrTokenNotFound's business and is
// handled where it can occur, never here.
func storeError(op string, err error) error {
	return redisconn.Outage(op, err, "the token store is unavailable; retry shortly")
}
