package redisstore

import (
	"context"
	"encoding/hex"
	"errors"
	"strconv"

	"github.com/redis/go-redis/v9"

	"github.com/liveproctor/workspaces/services/auth/internal/domain"
)

// Two earlier layouts are read, and deleted by Revoke, for one token
// lifetime (and expiryMargin) after the store is made:
//
//	t:<hex of the first 16 bytes of the digest>   string, value version 1
//	                                              (the previous release)
//	tok:<hex of the whole digest>                 hash, with the fields below
//	                                              (the release before it)
//
// Both keep the generations as today, under the same counters. Any such
// token was issued before this process started, so it has expired when the
// window closes, and from then on a token that is not found costs one read,
// not two. Within the window Lookup reads the current key first, so a token
// of the current layout still costs one GET; only when it is absent does
// one pipeline read both earlier keys (two slots on a Cluster).
//
// A replica of an earlier release that still runs while this one starts
// neither reads nor revokes the current layout's tokens, and a token it
// issues later may outlive the window: upgrade the auth service in one step
// (README.md, "Upgrading").
const (
	legacyEmail       = "email"
	legacyWorkspaceID = "workspaceId"
	legacyIssuedAt    = "issuedAt"
	legacyExpiresAt   = "expiresAt"
	legacyGen         = "gen"
	legacyUserGen     = "ugen"
)

// hexKey is the previous release's key of the token with digest d.
func hexKey(d domain.Digest) string { return "t:" + hex.EncodeToString(d[:keyIDBytes]) }

// hashKey is the key of the token with digest d in the layout before that.
func hashKey(d domain.Digest) string { return "tok:" + hex.EncodeToString(d[:]) }

// legacyKeys are the earlier layouts' keys of the token with digest d.
func legacyKeys(d domain.Digest) []string { return []string{hexKey(d), hashKey(d)} }

// readsLegacy reports whether tokens of the earlier layouts may still live.
func (s *Store) readsLegacy() bool { return s.now().Before(s.legacyUntil) }

// readLegacy returns a token of an earlier layout, the previous release's
// first, or ErrTokenNotFound when neither holds a whole one.
func (s *Store) readLegacy(ctx context.Context, d domain.Digest) (stored, error) {
	var str *redis.StringCmd
	var hash *redis.SliceCmd
	// The error is that of the first command that failed, redis.Nil
	// included; each answer is looked at below instead.
	_, _ = s.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		str = p.Get(ctx, hexKey(d))
		hash = p.HMGet(ctx, hashKey(d),
			legacyEmail, legacyWorkspaceID, legacyIssuedAt, legacyExpiresAt, legacyGen, legacyUserGen)
		return nil
	})
	v, err := str.Result()
	switch {
	case err == nil:
		if t, ok := decodeValue(v); ok {
			return t, nil
		}
		return stored{}, domain.ErrTokenNotFound
	case !errors.Is(err, redis.Nil):
		return stored{}, storeError("read token", err)
	}
	vals, err := hash.Result()
	if errors.Is(err, redis.Nil) {
		return stored{}, domain.ErrTokenNotFound
	}
	if err != nil {
		return stored{}, storeError("read token", err)
	}
	if t, ok := storedFromHash(vals); ok {
		return t, nil
	}
	return stored{}, domain.ErrTokenNotFound
}

// storedFromHash is a token from the HMGET of its hash's fields, in the
// order of readLegacy; false when one is missing or malformed.
func storedFromHash(vals []any) (stored, bool) {
	if len(vals) != 6 {
		return stored{}, false
	}
	str := make([]string, len(vals))
	for i, v := range vals {
		s, ok := v.(string)
		if !ok {
			return stored{}, false
		}
		str[i] = s
	}
	return storedFrom(str[0], str[1], str[2], str[3], str[4], str[5])
}

// storedFrom is a token from its fields as stored (the times in Unix
// milliseconds); false when a time is not a number.
func storedFrom(email, workspaceID, issuedAt, expiresAt, gen, ugen string) (stored, bool) {
	iat, err1 := strconv.ParseInt(issuedAt, 10, 64)
	exp, err2 := strconv.ParseInt(expiresAt, 10, 64)
	if err1 != nil || err2 != nil {
		return stored{}, false
	}
	return storedAt(email, workspaceID, iat, exp, gen, ugen), true
}
