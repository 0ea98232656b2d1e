// Package redisstore keeps SDK tokens in Redis (standalone, Sentinel or
// Cluster) through one redis.UniversalClient.
//
// # Keys
//
// Only digests are stored. A token's key is t:<base64url of the first 16
// bytes of the token's SHA-256>, so a Redis dump yields no usable token,
// and users appear in key names only as the SHA-256 of
// domain.UserKey(email). The token's session is one string in that key
// (value.go); the LTI 1.3 launch id of a session a launch opened is in a
// key beside it, in its slot. Everything else about a workspace carries
// the hash tag {ws:<workspaceId>}, so it lands in one Cluster slot and one
// script can change it atomically; a token's key cannot share that slot,
// because a lookup knows only the token. See keys.go for the full list.
//
// # Memory
//
// Tokens live 8 hours, so the store holds a key for every login of the
// last 8 hours, and the bytes per token decide how much Redis that takes.
// A token costs two hash-table entries (its key and its expiry, 24 bytes
// in a 32-byte class each), the key's name, the value's 16-byte object and
// the value's string, and the tables' slots (8 bytes each, at least one
// per key in each table); jemalloc rounds every allocation up to a size
// class, 16 bytes apart up to 128. The key's name is base64url rather than
// hex (a 32-byte class instead of 48; keys.go), and the value holds the
// token's life rather than its expiry instant (for the bench's session a
// 64-byte class instead of 80; value.go): 32 bytes less per token than the
// layout before 2026-11-26.
//
// # Revocation by generation
//
// Each workspace ({ws:W}:gen) and each user in it ({ws:W}:u:<user>:gen)
// has a counter. A token records the two values current when it was
// issued, and Lookup accepts it only while both counters still hold
// exactly those values (read with one MGET: they share a slot). Revoking a
// user or a workspace is therefore one INCR: atomic, immediate, and free
// of transactions across slots. The revoked tokens' keys are left to
// expire (within domain.TokenTTL): finding them would take an index of
// every workspace's tokens, and keeping one cost every login two set
// insertions and more than half of each token's memory (bench/README.md).
// A revoked token's launch key is left with it, and expires with it: only
// LookupWithLaunch reads it, and only once the token has passed its
// checks.
//
// # Save order
//
// Save first registers the token on the workspace's slot (one script:
// create missing counters at 0, make them live at least until the token
// expires, and read the two generations), then writes the token's key
// with its expiry (one SET with PXAT; for a launch's session, a MULTI of
// that and the launch key's SET, which share its slot). A crash between
// the two leaves counters that live a little longer, never a token outside
// its generations. On a single Redis server (a *redis.Client: standalone
// or Sentinel) both steps run as one script, in one round trip.
//
// # Expiry
//
// A token's key, and its launch key, expire exactly at its session's
// ExpiresAt (PXAT).
// Counters expire at least expiryMargin later, rounded up to the next
// whole expiry step (a minute), and their expiry is only ever moved later,
// so a counter outlives every token issued under it; if it could expire
// first, it would come back at 0 and could revive a revoked token that was
// issued under generation 0. For the same reason a counter that is missing
// (evicted, say) vouches for no token. The rounding lets the counters of a
// busy workspace keep their expiry for a minute of logins instead of
// getting a new one on each.
//
// # Errors
//
// A token that is unknown, expired, revoked or damaged is
// domain.ErrTokenNotFound. A Redis that cannot be reached, or refuses a
// command (out of memory, a read-only replica: any error reply), is
// fault.Unavailable; how soon that answer comes is bounded by the context
// and by the client's own timeouts (DialTimeout, ReadTimeout, PoolTimeout,
// MaxRetries), which the caller sets when it builds the client.
package redisstore

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/liveproctor/workspaces/pkg/fault"
	"github.com/liveproctor/workspaces/pkg/ratelimit"
	"github.com/liveproctor/workspaces/services/auth/internal/app"
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

// WithExpiryStep changes what the expiry of counters is rounded up to (a
// minute by default), so tests can watch them expire.
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

// Save registers the token with its generations, then writes it (see the
// package documentation). A session that has already expired is not
// stored.
func (s *Store) Save(ctx context.Context, d domain.Digest, session domain.Session) error {
	if !s.now().Before(session.ExpiresAt) {
		return nil
	}
	keys, args := s.saveArgs(d, session)
	if _, single := s.rdb.(*redis.Client); single {
		if err := saveScript.Run(ctx, s.rdb, keys, args...).Err(); err != nil {
			return storeError("save token", err)
		}
		return nil
	}

	gens, err := registerScript.Run(ctx, s.rdb, keys[:2], args[0]).StringSlice()
	if err != nil {
		return storeError("register token", err)
	}
	if len(gens) != 2 {
		return fault.Wrap(fault.Internal, fmt.Errorf("register token: script answered %d values, want 2", len(gens)), "internal error")
	}
	if err := s.write(ctx, d, encodeValue(gens[0], gens[1], session), session); err != nil {
		return storeError("write token", err)
	}
	return nil
}

// saveArgs are saveScript's keys and arguments: the generation counters,
// the token's key and, for a session an LTI 1.3 launch opened, its launch
// key; the counters' keep-until instant, the value's session part, the
// expiry and the launch id.
func (s *Store) saveArgs(d domain.Digest, session domain.Session) ([]string, []any) {
	k := keysOf(session.WorkspaceID, session.Email)
	keys := []string{k.workspaceGen, k.userGen, tokenKey(d)}
	args := []any{s.keepUntil(session.ExpiresAt), sessionSuffix(session), session.ExpiresAt.UnixMilli()}
	if session.LTILaunchID != "" {
		keys = append(keys, launchKey(d))
		args = append(args, session.LTILaunchID)
	}
	return keys, args
}

// write sets the token's key to value and, for a session an LTI 1.3
// launch opened, its launch key to the launch id, both expiring with the
// session. The two keys share a slot, so one transaction writes both.
func (s *Store) write(ctx context.Context, d domain.Digest, value string, session domain.Session) error {
	expiry := redis.SetArgs{ExpireAt: session.ExpiresAt}
	if session.LTILaunchID == "" {
		return s.rdb.SetArgs(ctx, tokenKey(d), value, expiry).Err()
	}
	_, err := s.rdb.TxPipelined(ctx, func(p redis.Pipeliner) error {
		p.SetArgs(ctx, tokenKey(d), value, expiry)
		p.SetArgs(ctx, launchKey(d), session.LTILaunchID, expiry)
		return nil
	})
	return err
}

// LoginStore is a Store that runs a login's limits in the same step as the
// save of its token (app.LoginStore): the limits of pkg/ratelimit, counted
// by the guard it was made with.
type LoginStore struct {
	*Store
	guard *ratelimit.Guard
}

var _ app.LoginStore = (*LoginStore)(nil)

// WithLoginLimits returns the store running logins' limits with guard, the
// one the service's other limits count with.
func (s *Store) WithLoginLimits(guard *ratelimit.Guard) *LoginStore {
	return &LoginStore{Store: s, guard: guard}
}

// SaveLogin checks a login's limits (the failure counters of the client's
// address, then the key pair's rate) and saves its token only when they
// let it pass (see Save): on a single Redis server in one script, one
// round trip for the whole login; elsewhere the limits with calls of their
// own, then Save. A refusal is the limits' error, and no token is saved.
func (s *LoginStore) SaveLogin(ctx context.Context, d domain.Digest, session domain.Session, login app.LoginLimits) error {
	limits := s.guard.Plan(ctx, login.AppKey, login.Own)
	_, single := s.rdb.(*redis.Client)
	if !single || !s.now().Before(session.ExpiresAt) {
		if err := limits.Separately(ctx); err != nil {
			return err
		}
		return s.Save(ctx, d, session)
	}
	keys, args := s.saveArgs(d, session)
	keys, args = append(limits.Keys(), keys...), append(limits.Args(), args...)
	verdict, err := guardedSaveScript.Run(ctx, s.rdb, keys, args...).Result()
	if err != nil {
		return storeError("save token", err)
	}
	return limits.Settle(ctx, verdict)
}

// stored is a token as read back.
type stored struct {
	session   domain.Session
	gen, ugen string
}

// read returns the token, or ErrTokenNotFound when it is absent or
// damaged.
func (s *Store) read(ctx context.Context, d domain.Digest) (stored, error) {
	v, err := s.rdb.Get(ctx, tokenKey(d)).Result()
	if errors.Is(err, redis.Nil) {
		return stored{}, domain.ErrTokenNotFound
	}
	if err != nil {
		return stored{}, storeError("read token", err)
	}
	return decoded(v)
}

// readWithLaunch is read with the session's launch id, from the same
// MGET: the launch key shares the token's slot.
func (s *Store) readWithLaunch(ctx context.Context, d domain.Digest) (stored, error) {
	vals, err := s.rdb.MGet(ctx, tokenKey(d), launchKey(d)).Result()
	if err != nil {
		return stored{}, storeError("read token", err)
	}
	if len(vals) != 2 || vals[0] == nil {
		return stored{}, domain.ErrTokenNotFound
	}
	v, _ := vals[0].(string)
	t, err := decoded(v)
	if err != nil {
		return stored{}, err
	}
	// A token that a replica of an earlier version saved has no launch key.
	t.session.LTILaunchID, _ = vals[1].(string)
	return t, nil
}

// decoded is the token a value holds, or ErrTokenNotFound when it holds
// none.
func decoded(v string) (stored, error) {
	t, ok := decodeValue(v)
	if !ok {
		return stored{}, domain.ErrTokenNotFound
	}
	return t, nil
}

// Lookup returns the session of a live token whose workspace and user
// generations are still those it was issued under, without its launch id.
func (s *Store) Lookup(ctx context.Context, d domain.Digest) (domain.Session, error) {
	return s.lookup(ctx, d, s.read)
}

// LookupWithLaunch is Lookup with the session's launch id, at the cost of
// an MGET of two keys in place of Lookup's GET.
func (s *Store) LookupWithLaunch(ctx context.Context, d domain.Digest) (domain.Session, error) {
	return s.lookup(ctx, d, s.readWithLaunch)
}

// lookup returns the session of the token read reads, if it is live and
// its generations are still those it was issued under.
func (s *Store) lookup(ctx context.Context, d domain.Digest, read func(context.Context, domain.Digest) (stored, error)) (domain.Session, error) {
	t, err := read(ctx, d)
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
	if len(vals) != 2 || vals[0] != t.gen || vals[1] != t.ugen {
		return domain.Session{}, domain.ErrTokenNotFound
	}
	return t.session, nil
}

// Revoke deletes one token, and its launch key (one DEL: they share a
// slot).
func (s *Store) Revoke(ctx context.Context, d domain.Digest) error {
	if err := s.rdb.Del(ctx, tokenKey(d), launchKey(d)).Err(); err != nil {
		return storeError("delete token", err)
	}
	return nil
}

// RevokeUser revokes every token of the user in the workspace: one INCR.
func (s *Store) RevokeUser(ctx context.Context, workspaceID, email string) error {
	k := keysOf(workspaceID, email)
	if err := s.bump(ctx, k.userGen); err != nil {
		return storeError("revoke user", err)
	}
	return nil
}

// RevokeWorkspace revokes every token of the workspace: one INCR.
func (s *Store) RevokeWorkspace(ctx context.Context, workspaceID string) error {
	k := keysOf(workspaceID, "")
	if err := s.bump(ctx, k.workspaceGen); err != nil {
		return storeError("revoke workspace", err)
	}
	return nil
}

// bump advances a generation counter. A counter it creates lives as long
// as a token issued now, and its margin and step, would.
func (s *Store) bump(ctx context.Context, counter string) error {
	life := domain.TokenTTL + expiryMargin + s.expiryStep
	return bumpScript.Run(ctx, s.rdb, []string{counter}, life.Milliseconds()).Err()
}
