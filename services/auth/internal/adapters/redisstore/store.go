// Package redisstore keeps SDK tokens in Redis: standalone, Sentinel or
// Cluster, through one redis.UniversalClient.
//
// Only digests are stored: a token's key is its SHA-256 (see keys.go), so
// a Redis dump yields no usable token. Each token expires with its session
// (PEXPIREAT), and so do the indexes and counters that refer to it.
//
// Revocation is by generation. Each workspace and each user in it has a
// counter; a token records the two values current when it was issued and
// is live only while both are unchanged. Revoking a user or a workspace is
// one INCR, atomic and immediate, with no transaction across Cluster slots;
// deleting the revoked tokens' keys afterwards is clean-up.
//
// On a single Redis server one script registers a token in its indexes and
// writes it, atomically. On a Cluster the token's key lives in another slot
// than its indexes, so the indexes are written first (one script, one slot)
// and the token second: a crash between the two leaves at most an index
// entry without a token, never a token outside its indexes.
package redisstore

import (
	"context"
	"encoding/hex"
	"errors"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/liveproctor/workspaces/services/auth/internal/domain"
)

// counterTTL is how long a revocation counter outlives a revocation: as
// long as any token it could still have to refuse.
const counterTTL = domain.TokenTTL + time.Minute

// Store implements domain.TokenStore on Redis.
type Store struct {
	rdb redis.UniversalClient
	now func() time.Time
}

var _ domain.TokenStore = (*Store)(nil)

// Option changes how New builds a Store.
type Option func(*Store)

// WithClock replaces time.Now, for tests.
func WithClock(now func() time.Time) Option { return func(s *Store) { s.now = now } }

// New returns a Store on rdb.
func New(rdb redis.UniversalClient, opts ...Option) *Store {
	s := &Store{rdb: rdb, now: time.Now}
	for _, opt := range opts {
		opt(s)
	}
	return s
}

// Ping reports whether Redis answers (every Cluster master, for a Cluster).
func (s *Store) Ping(ctx context.Context) error {
	if c, ok := s.rdb.(*redis.ClusterClient); ok {
		err := c.ForEachMaster(ctx, func(ctx context.Context, m *redis.Client) error { return m.Ping(ctx).Err() })
		if err != nil {
			return storeError("ping", err)
		}
		return nil
	}
	if err := s.rdb.Ping(ctx).Err(); err != nil {
		return storeError("ping", err)
	}
	return nil
}

// Save registers the token in its indexes, then writes it: in one script
// on a single Redis server, in two steps (index first) on a Cluster.
func (s *Store) Save(ctx context.Context, d domain.Digest, session domain.Session) error {
	life := session.ExpiresAt.Sub(s.now())
	if life <= 0 {
		return nil // already expired: nothing to keep
	}
	k := keysOf(session.WorkspaceID, session.Email)
	if _, cluster := s.rdb.(*redis.ClusterClient); !cluster {
		err := saveScript.Run(ctx, s.rdb,
			[]string{k.workspaceTokens, k.userTokens, k.workspaceGen, k.userGen, tokenKey(d)},
			hex.EncodeToString(d[:]), (life + time.Minute).Milliseconds(),
			session.Email, session.WorkspaceID, session.IssuedAt.UnixMilli(), session.ExpiresAt.UnixMilli()).Err()
		if err != nil {
			return storeError("save token", err)
		}
		return nil
	}
	gens, err := registerScript.Run(ctx, s.rdb,
		[]string{k.workspaceTokens, k.userTokens, k.workspaceGen, k.userGen},
		hex.EncodeToString(d[:]), (life + time.Minute).Milliseconds()).StringSlice()
	if err != nil {
		return storeError("register token", err)
	}
	if len(gens) != 2 {
		return storeError("register token", errors.New("unexpected script reply"))
	}
	key := tokenKey(d)
	_, err = s.rdb.TxPipelined(ctx, func(p redis.Pipeliner) error {
		p.HSet(ctx, key,
			"email", session.Email,
			"workspaceId", session.WorkspaceID,
			"iat", session.IssuedAt.UnixMilli(),
			"exp", session.ExpiresAt.UnixMilli(),
			"gen", gens[0],
			"ugen", gens[1])
		p.PExpireAt(ctx, key, session.ExpiresAt)
		return nil
	})
	if err != nil {
		return storeError("write token", err)
	}
	return nil
}

// stored is a token as read back.
type stored struct {
	session   domain.Session
	gen, ugen string
}

var tokenFields = []string{"email", "workspaceId", "iat", "exp", "gen", "ugen"}

// read returns the token's hash, or ErrTokenNotFound when it is absent or
// incomplete.
func (s *Store) read(ctx context.Context, d domain.Digest) (stored, error) {
	vals, err := s.rdb.HMGet(ctx, tokenKey(d), tokenFields...).Result()
	if err != nil {
		return stored{}, storeError("read token", err)
	}
	str := make([]string, len(vals))
	for i, v := range vals {
		sv, ok := v.(string)
		if !ok {
			return stored{}, domain.ErrTokenNotFound
		}
		str[i] = sv
	}
	iat, err1 := strconv.ParseInt(str[2], 10, 64)
	exp, err2 := strconv.ParseInt(str[3], 10, 64)
	if err1 != nil || err2 != nil {
		return stored{}, domain.ErrTokenNotFound
	}
	return stored{
		session: domain.Session{
			Email: str[0], WorkspaceID: str[1],
			IssuedAt: time.UnixMilli(iat).UTC(), ExpiresAt: time.UnixMilli(exp).UTC(),
		},
		gen: str[4], ugen: str[5],
	}, nil
}

// Lookup returns the session of a live token.
func (s *Store) Lookup(ctx context.Context, d domain.Digest) (domain.Session, error) {
	t, err := s.read(ctx, d)
	if err != nil {
		return domain.Session{}, err
	}
	if !s.now().Before(t.session.ExpiresAt) {
		return domain.Session{}, domain.ErrTokenNotFound
	}
	k := keysOf(t.session.WorkspaceID, t.session.Email)
	gens, err := s.rdb.MGet(ctx, k.workspaceGen, k.userGen).Result()
	if err != nil {
		return domain.Session{}, storeError("read revocations", err)
	}
	if generation(gens[0]) != t.gen || generation(gens[1]) != t.ugen {
		return domain.Session{}, domain.ErrTokenNotFound
	}
	return t.session, nil
}

// generation reads a counter; a missing one is 0, as the register script
// would have created it.
func generation(v any) string {
	if s, ok := v.(string); ok {
		return s
	}
	return "0"
}

// Revoke deletes one token and its index entries.
func (s *Store) Revoke(ctx context.Context, d domain.Digest) error {
	t, err := s.read(ctx, d)
	if errors.Is(err, domain.ErrTokenNotFound) {
		return s.del(ctx, tokenKey(d))
	}
	if err != nil {
		return err
	}
	if err := s.del(ctx, tokenKey(d)); err != nil {
		return err
	}
	k := keysOf(t.session.WorkspaceID, t.session.Email)
	member := hex.EncodeToString(d[:])
	_, err = s.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		p.SRem(ctx, k.workspaceTokens, member)
		p.SRem(ctx, k.userTokens, member)
		return nil
	})
	if err != nil {
		return storeError("unindex token", err)
	}
	return nil
}

// RevokeUser revokes the user's tokens, then removes them.
func (s *Store) RevokeUser(ctx context.Context, workspaceID, email string) error {
	k := keysOf(workspaceID, email)
	if err := bumpScript.Run(ctx, s.rdb, []string{k.userGen}, counterTTL.Milliseconds()).Err(); err != nil {
		return storeError("revoke user", err)
	}
	return s.sweep(ctx, k.userTokens, k.workspaceTokens)
}

// RevokeWorkspace revokes the workspace's tokens, then removes them.
func (s *Store) RevokeWorkspace(ctx context.Context, workspaceID string) error {
	k := keysOf(workspaceID, "")
	if err := bumpScript.Run(ctx, s.rdb, []string{k.workspaceGen}, counterTTL.Milliseconds()).Err(); err != nil {
		return storeError("revoke workspace", err)
	}
	return s.sweep(ctx, k.workspaceTokens, "")
}

// sweep deletes the tokens listed in index and the index itself, and takes
// them out of also (when given). Revocation has already happened; this
// only frees memory, so a failure part-way is reported but harmless.
func (s *Store) sweep(ctx context.Context, index, also string) error {
	members, err := s.rdb.SMembers(ctx, index).Result()
	if err != nil {
		return storeError("list revoked tokens", err)
	}
	_, err = s.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		for _, m := range members {
			p.Del(ctx, "tok:"+m)
		}
		if also != "" && len(members) > 0 {
			args := make([]any, len(members))
			for i, m := range members {
				args[i] = m
			}
			p.SRem(ctx, also, args...)
		}
		p.Del(ctx, index)
		return nil
	})
	if err != nil {
		return storeError("remove revoked tokens", err)
	}
	return nil
}

func (s *Store) del(ctx context.Context, key string) error {
	if err := s.rdb.Del(ctx, key).Err(); err != nil {
		return storeError("delete token", err)
	}
	return nil
}
