package redisstore

import (
	"context"

	"github.com/redis/go-redis/v9"
)

// sweepBatch is how many digests sweep reads from an index at a time.
const sweepBatch = 500

// sweep deletes the tokens listed in index, then takes them out of index
// and of every set in alsoFrom (all on the workspace's slot). By the time
// it runs the tokens are already revoked, so this only frees memory and a
// failure part-way is harmless; it is reported all the same.
//
// It removes the digests it has read rather than deleting the sets, so a
// token saved while it runs keeps its index entries. A set whose last
// member is removed disappears.
func (s *Store) sweep(ctx context.Context, index string, alsoFrom ...string) error {
	var cursor uint64
	for {
		digests, next, err := s.rdb.SScan(ctx, index, cursor, "", sweepBatch).Result()
		if err != nil {
			return storeError("list revoked tokens", err)
		}
		if len(digests) > 0 {
			if err := s.drop(ctx, digests, append([]string{index}, alsoFrom...)); err != nil {
				return err
			}
		}
		if next == 0 {
			return nil
		}
		cursor = next
	}
}

// drop deletes the tokens with the given digests (a pipeline, which a
// Cluster client splits by node), then removes the digests from sets.
func (s *Store) drop(ctx context.Context, digests, sets []string) error {
	_, err := s.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		for _, h := range digests {
			p.Del(ctx, tokenKey(h))
		}
		return nil
	})
	if err != nil {
		return storeError("delete revoked tokens", err)
	}
	members := make([]any, len(digests))
	for i, h := range digests {
		members[i] = h
	}
	_, err = s.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		for _, set := range sets {
			p.SRem(ctx, set, members...)
		}
		return nil
	})
	if err != nil {
		return storeError("unindex revoked tokens", err)
	}
	return nil
}
