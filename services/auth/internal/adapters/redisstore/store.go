// Package redisstore keeps SDK tokens in Redis (standalone, Sentinel or
// Cluster) through one redis.UniversalClient.
//
// # Keys
//
// Only digests are stored. A token's key is tok:<hex SHA-256 of the
// token>, so a Redis dump yields no usable token, and users appear in key
// names only as the SHA-256 of domain.UserKey(email). Everything else about
// a workspace carries the hash tag {ws:<workspaceId>}, so it lands in one
// Cluster slot and one script can change it atomically; a token's key
// cannot share that slot, because a lookup knows only the token. See
// keys.go for the full list.
//
// # Revocation by generation
//
// Each workspace ({ws:W}:gen) and each user in it ({ws:W}:u:<user>:gen)
// has a counter. A token records the two values current when it was
// issued, and Lookup accepts it only while both counters still hold
// exactly those values (read with one MGET: they share a slot). Revoking a
// user or a workspace is therefore one INCR: atomic, immediate, and free
// of transactions across slots. Deleting the revoked tokens' keys
// afterwards, from the index sets {ws:W}:tokens and {ws:W}:u:<user>:tokens,
// only frees memory; it is best effort.
//
// # Save order
//
// Save first registers the token on the workspace's slot (one script: add
// the digest to both indexes, create missing counters at 0, make indexes
// and counters live at least until the token expires, and read the two
// generations), then writes the token's hash and its expiry in one MULTI
// on the token's key. A crash between the two leaves at most an index
// entry without a token, never a token outside its indexes. On a single
// Redis server (a *redis.Client: standalone or Sentinel) both steps run as
// one script, in one round trip.
//
// # Expiry
//
// A token's key expires exactly at its session's ExpiresAt (PEXPIREAT).
// Indexes and counters expire at least expiryMargin later, rounded up to
// the next whole expiry step (a minute), and their expiry is only ever moved later, so
// a counter outlives every token issued under it; if it could expire
// first, it would come back at 0 and could revive a revoked token that was
// issued under generation 0. The rounding lets the keys of a busy
// workspace keep their expiry for a minute of logins instead of getting a
// new one on each.
//
// # Errors
//
// A token that is unknown, expired, revoked or half written is
// domain.ErrTokenNotFound. A Redis that cannot be reached is
// fault.Unavailable; how soon that answer comes is bounded by the context
// and by the client's own timeouts (DialTimeout, ReadTimeout, PoolTimeout,
// MaxRetries), which the caller sets when it builds the client.
package redisstore

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/liveproctor/workspaces/services/auth/internal/domain"
)

// expiryMargin is how long indexes and counters outlive the last token
// registered in them. The token's key and its counters may sit on two
// Cluster masters whose clocks differ; the margin covers that difference.
const expiryMargin = time.Second

// defaultExpiryStep is what the expiry of indexes and counters is rounded
// up to (see WithExpiryStep).
const defaultExpiryStep = time.Minute

// keepUntil is when the indexes and counters of a token expiring at exp
// may expire, in Unix milliseconds: expiryMargin after it, rounded up to a
// whole expiry step.
func (s *Store) keepUntil(exp time.Time) int64 {
	step := max(s.expiryStep.Milliseconds(), 1)
	at := exp.Add(expiryMargin).UnixMilli()
	return (at + step - 1) / step * step
}

// Store implements domain.TokenStore on Redis.
type Store struct {
	rdb        redis.UniversalClient
	now        func() time.Time
	expiryStep time.Duration
}

var _ domain.TokenStore = (*Store)(nil)

// Option changes how New builds a Store.
type Option func(*Store)

// WithClock replaces time.Now, for tests.
func WithClock(now func() time.Time) Option { return func(s *Store) { s.now = now } }

// WithExpiryStep changes what the expiry of indexes and counters is
// rounded up to (a minute by default), so tests can watch them expire.
func WithExpiryStep(d time.Duration) Option { return func(s *Store) { s.expiryStep = d } }

// New returns a Store on rdb, which the caller builds (standalone, Sentinel
// or Cluster) with the timeouts it wants, and closes.
func New(rdb redis.UniversalClient, opts ...Option) *Store {
	s := &Store{rdb: rdb, now: time.Now, expiryStep: defaultExpiryStep}
	for _, opt := range opts {
		opt(s)
	}
	return s
}

// Ping reports whether Redis answers: every master, for a Cluster.
func (s *Store) Ping(ctx context.Context) error {
	var err error
	if c, ok := s.rdb.(*redis.ClusterClient); ok {
		err = c.ForEachMaster(ctx, func(ctx context.Context, m *redis.Client) error { return m.Ping(ctx).Err() })
	} else {
		err = s.rdb.Ping(ctx).Err()
	}
	if err != nil {
		return storeError("ping", err)
	}
	return nil
}

// Save registers the token in its indexes, then writes it (see the package
// documentation). A session that has already expired is not stored.
func (s *Store) Save(ctx context.Context, d domain.Digest, session domain.Session) error {
	if !s.now().Before(session.ExpiresAt) {
		return nil
	}
	k := keysOf(session.WorkspaceID, session.Email)
	member, exp := digestHex(d), session.ExpiresAt.UnixMilli()
	keep := s.keepUntil(session.ExpiresAt)
	indexKeys := []string{k.workspaceTokens, k.userTokens, k.workspaceGen, k.userGen}

	if _, single := s.rdb.(*redis.Client); single {
		err := saveScript.Run(ctx, s.rdb, append(indexKeys, tokenKey(member)),
			member, keep, session.Email, session.WorkspaceID, session.IssuedAt.UnixMilli(), exp).Err()
		if err != nil {
			return storeError("save token", err)
		}
		return nil
	}

	gens, err := registerScript.Run(ctx, s.rdb, indexKeys, member, keep).StringSlice()
	if err != nil {
		return storeError("register token", err)
	}
	if len(gens) != 2 {
		return storeError("register token", fmt.Errorf("script answered %d values, want 2", len(gens)))
	}
	key := tokenKey(member)
	_, err = s.rdb.TxPipelined(ctx, func(p redis.Pipeliner) error {
		p.HSet(ctx, key,
			fieldEmail, session.Email,
			fieldWorkspaceID, session.WorkspaceID,
			fieldIssuedAt, session.IssuedAt.UnixMilli(),
			fieldExpiresAt, exp,
			fieldGen, gens[0],
			fieldUserGen, gens[1])
		p.PExpireAt(ctx, key, session.ExpiresAt)
		return nil
	})
	if err != nil {
		return storeError("write token", err)
	}
	return nil
}

// stored is a token's hash as read back.
type stored struct {
	session   domain.Session
	gen, ugen string
}

// read returns the token's hash, or ErrTokenNotFound when it is absent or
// incomplete.
func (s *Store) read(ctx context.Context, d domain.Digest) (stored, error) {
	vals, err := s.rdb.HMGet(ctx, tokenKey(digestHex(d)),
		fieldEmail, fieldWorkspaceID, fieldIssuedAt, fieldExpiresAt, fieldGen, fieldUserGen).Result()
	if errors.Is(err, redis.Nil) {
		return stored{}, domain.ErrTokenNotFound
	}
	if err != nil {
		return stored{}, storeError("read token", err)
	}
	str, ok := allStrings(vals)
	if !ok {
		return stored{}, domain.ErrTokenNotFound
	}
	iat, err1 := strconv.ParseInt(str[2], 10, 64)
	exp, err2 := strconv.ParseInt(str[3], 10, 64)
	if err1 != nil || err2 != nil {
		return stored{}, domain.ErrTokenNotFound
	}
	return stored{
		session: domain.Session{
			Email:       str[0],
			WorkspaceID: str[1],
			IssuedAt:    time.UnixMilli(iat).UTC(),
			ExpiresAt:   time.UnixMilli(exp).UTC(),
		},
		gen:  str[4],
		ugen: str[5],
	}, nil
}

// allStrings returns vals as strings, or false when one is missing (nil).
func allStrings(vals []any) ([]string, bool) {
	out := make([]string, len(vals))
	for i, v := range vals {
		s, ok := v.(string)
		if !ok {
			return nil, false
		}
		out[i] = s
	}
	return out, true
}

// Lookup returns the session of a live token whose workspace and user
// generations are still those it was issued under.
func (s *Store) Lookup(ctx context.Context, d domain.Digest) (domain.Session, error) {
	t, err := s.read(ctx, d)
	if err != nil {
		return domain.Session{}, err
	}
	if !s.now().Before(t.session.ExpiresAt) {
		return domain.Session{}, domain.ErrTokenNotFound
	}
	k := keysOf(t.session.WorkspaceID, t.session.Email)
	vals, err := s.rdb.MGet(ctx, k.workspaceGen, k.userGen).Result()
	if err != nil {
		return domain.Session{}, storeError("read generations", err)
	}
	// A missing counter fails the check too: counters outlive their
	// tokens, so one that is gone cannot vouch for any token.
	gens, ok := allStrings(vals)
	if !ok || gens[0] != t.gen || gens[1] != t.ugen {
		return domain.Session{}, domain.ErrTokenNotFound
	}
	return t.session, nil
}

// Revoke deletes one token, then its index entries. A token that is
// unknown or half written has no index entries this store can find; its
// key, if any, is deleted all the same.
func (s *Store) Revoke(ctx context.Context, d domain.Digest) error {
	member := digestHex(d)
	key := tokenKey(member)
	vals, err := s.rdb.HMGet(ctx, key, fieldEmail, fieldWorkspaceID).Result()
	if err != nil && !errors.Is(err, redis.Nil) {
		return storeError("read token", err)
	}
	if err := s.rdb.Del(ctx, key).Err(); err != nil {
		return storeError("delete token", err)
	}
	owner, ok := allStrings(vals)
	if !ok {
		return nil
	}
	k := keysOf(owner[1], owner[0])
	_, err = s.rdb.TxPipelined(ctx, func(p redis.Pipeliner) error {
		p.SRem(ctx, k.workspaceTokens, member)
		p.SRem(ctx, k.userTokens, member)
		return nil
	})
	if err != nil {
		return storeError("unindex token", err)
	}
	return nil
}

// RevokeUser revokes every token of the user in the workspace (one INCR),
// then deletes them.
func (s *Store) RevokeUser(ctx context.Context, workspaceID, email string) error {
	k := keysOf(workspaceID, email)
	if err := bumpScript.Run(ctx, s.rdb, []string{k.userGen}, domain.TokenTTL.Milliseconds()).Err(); err != nil {
		return storeError("revoke user", err)
	}
	return s.sweep(ctx, k.userTokens, k.workspaceTokens)
}

// RevokeWorkspace revokes every token of the workspace (one INCR), then
// deletes them. The users' index sets are left to expire: they can only
// name tokens that are already revoked or deleted, or issued later.
func (s *Store) RevokeWorkspace(ctx context.Context, workspaceID string) error {
	k := keysOf(workspaceID, "")
	if err := bumpScript.Run(ctx, s.rdb, []string{k.workspaceGen}, domain.TokenTTL.Milliseconds()).Err(); err != nil {
		return storeError("revoke workspace", err)
	}
	return s.sweep(ctx, k.workspaceTokens)
}
