package redisstore

import (
	"context"
	"encoding/hex"
	"errors"

	"github.com/redis/go-redis/v9"

	"github.com/liveproctor/workspaces/services/auth/internal/domain"
)

// Tokens saved by versions before the current key layout are hashes under
// tok:<hex of the whole digest>, with the fields below. They are read (and
// revoked) for one token lifetime after the store is made: any such token
// was issued before this process started, so it has expired by then, and
// from then on a token that is not found costs one read, not two.
//
// During a rolling upgrade from such a version, the replicas not yet
// upgraded cannot read tokens the upgraded ones issue (docs/operations.md).
const (
	legacyEmail       = "email"
	legacyWorkspaceID = "workspaceId"
	legacyIssuedAt    = "issuedAt"
	legacyExpiresAt   = "expiresAt"
	legacyGen         = "gen"
	legacyUserGen     = "ugen"
)

// legacyKey is the earlier layout's key of the token with digest d.
func legacyKey(d domain.Digest) string { return "tok:" + hex.EncodeToString(d[:]) }

// readsLegacy reports whether tokens of the earlier layout may still live.
func (s *Store) readsLegacy() bool { return s.now().Before(s.legacyUntil) }

// readLegacy returns a token of the earlier layout, or ErrTokenNotFound
// when it is absent or incomplete.
func (s *Store) readLegacy(ctx context.Context, d domain.Digest) (stored, error) {
	vals, err := s.rdb.HMGet(ctx, legacyKey(d),
		legacyEmail, legacyWorkspaceID, legacyIssuedAt, legacyExpiresAt, legacyGen, legacyUserGen).Result()
	if errors.Is(err, redis.Nil) {
		return stored{}, domain.ErrTokenNotFound
	}
	if err != nil {
		return stored{}, storeError("read token", err)
	}
	str := make([]string, len(vals))
	for i, v := range vals {
		s, ok := v.(string)
		if !ok {
			return stored{}, domain.ErrTokenNotFound
		}
		str[i] = s
	}
	t, ok := storedFrom(str[0], str[1], str[2], str[3], str[4], str[5])
	if !ok {
		return stored{}, domain.ErrTokenNotFound
	}
	return t, nil
}
