package portalstate

import (
	"context"
	"encoding/json"
	"errors"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/liveproctor/workspaces/pkg/fault"
	"github.com/liveproctor/workspaces/pkg/redisconn"
	portalapp "github.com/liveproctor/workspaces/services/workspace/internal/portal/app"
	portaldomain "github.com/liveproctor/workspaces/services/workspace/internal/portal/domain"
)

// RedisStore keeps the portal's links in Redis, three kinds of keys, each
// written with its expiry in the same command:
//
//   - portal:link:<id>: the link (JSON), until its ForgetAt; changed only
//     by casScript, which writes it if it is still what was read;
//   - portal:open:<SHA-256 of the link's secret>: the link's id, until the
//     link expires, taken by GETDEL, so of two openings of one link (on
//     any replica) one gets it;
//   - portal:session:<SHA-256 of a session's token>: the link's id, until
//     the session's end;
//   - portal:made:<workspace id>:<window's Unix time>: how many links the
//     workspace made in that window, until a minute past its end.
//
// No command names two keys, so it works on a Cluster without hash tags.
// The link is what says whether a session stands (it holds the session's
// digest, and its revocation): the other two only lead to it.
type RedisStore struct {
	rdb redis.UniversalClient
}

var _ portalapp.Store = (*RedisStore)(nil)

// NewRedisStore returns a store over rdb.
func NewRedisStore(rdb redis.UniversalClient) *RedisStore { return &RedisStore{rdb: rdb} }

const unavailable = "the administrator's portal cannot reach its store right now: try again in a minute"

// The keys, by link id or by the digest of a secret or a token.
func linkKey(id string) string       { return "portal:link:" + id }
func openKey(secret string) string   { return "portal:open:" + portaldomain.Digest(secret) }
func sessionKey(token string) string { return "portal:session:" + portaldomain.Digest(token) }
func madeKey(workspaceID string, window time.Time) string {
	return "portal:made:" + workspaceID + ":" + strconv.FormatInt(window.Unix(), 10)
}

// madeKeyLife is how long a window's count outlives the window: past it,
// no replica's clock still counts in that window.
const madeKeyLife = portaldomain.LinkWindow + time.Minute

// CountMade increments the window's count (INCR, and its expiry set in the
// same transaction).
func (s *RedisStore) CountMade(ctx context.Context, workspaceID string, window time.Time) (int64, error) {
	key := madeKey(workspaceID, window)
	var n *redis.IntCmd
	_, err := s.rdb.TxPipelined(ctx, func(p redis.Pipeliner) error {
		n = p.Incr(ctx, key)
		p.ExpireAt(ctx, key, window.Add(madeKeyLife))
		return nil
	})
	if err != nil {
		return 0, redisconn.Outage("count the portal links made", err, unavailable)
	}
	return n.Val(), nil
}

// Add stores l, and the way to it by secret.
func (s *RedisStore) Add(ctx context.Context, l portaldomain.Link, secret string) error {
	value, err := json.Marshal(linkRecord(l))
	if err != nil {
		return fault.Wrap(fault.Internal, err, "store a portal link")
	}
	_, err = s.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		p.SetArgs(ctx, linkKey(l.ID), value, redis.SetArgs{ExpireAt: l.ForgetAt()})
		p.SetArgs(ctx, openKey(secret), l.ID, redis.SetArgs{ExpireAt: l.ExpiresAt})
		return nil
	})
	if err != nil {
		return redisconn.Outage("store a portal link", err, unavailable)
	}
	return nil
}

// Spend takes the link's id secret leads to (GETDEL).
func (s *RedisStore) Spend(ctx context.Context, secret string) (string, bool, error) {
	return linkID(s.rdb.GetDel(ctx, openKey(secret)), "spend a portal link")
}

// StartSession makes token lead to the link id until end.
func (s *RedisStore) StartSession(ctx context.Context, token, id string, end time.Time) error {
	if err := s.rdb.SetArgs(ctx, sessionKey(token), id, redis.SetArgs{ExpireAt: end}).Err(); err != nil {
		return redisconn.Outage("start a portal session", err, unavailable)
	}
	return nil
}

// SessionLink returns the link's id token leads to.
func (s *RedisStore) SessionLink(ctx context.Context, token string) (string, bool, error) {
	return linkID(s.rdb.Get(ctx, sessionKey(token)), "read a portal session")
}

// linkID is the answer of a GET or GETDEL of a link's id (what, for
// errors).
func linkID(cmd *redis.StringCmd, what string) (string, bool, error) {
	id, err := cmd.Result()
	switch {
	case errors.Is(err, redis.Nil):
		return "", false, nil
	case err != nil:
		return "", false, redisconn.Outage(what, err, unavailable)
	}
	return id, true, nil
}

// Link returns the link id.
func (s *RedisStore) Link(ctx context.Context, id string) (portaldomain.Link, bool, error) {
	l, _, ok, err := s.read(ctx, id)
	return l, ok, err
}

// read returns the link id and its stored value.
func (s *RedisStore) read(ctx context.Context, id string) (portaldomain.Link, string, bool, error) {
	value, err := s.rdb.Get(ctx, linkKey(id)).Result()
	switch {
	case errors.Is(err, redis.Nil):
		return portaldomain.Link{}, "", false, nil
	case err != nil:
		return portaldomain.Link{}, "", false, redisconn.Outage("read a portal link", err, unavailable)
	}
	var rec linkRecord
	if err := json.Unmarshal([]byte(value), &rec); err != nil {
		return portaldomain.Link{}, "", false, fault.Wrap(fault.Internal, err, "read a portal link")
	}
	return portaldomain.Link(rec), value, true, nil
}

// casScript writes ARGV[2] to KEYS[1], expiring at ARGV[3] (Unix
// milliseconds), if it still holds ARGV[1]; it answers 1 when it did.
var casScript = redis.NewScript(`
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end
redis.call('SET', KEYS[1], ARGV[2], 'PXAT', ARGV[3])
return 1`)

// updateAttempts bounds the rounds of an Update that other changes of the
// link keep overtaking: a link sees a few changes in its life.
const updateAttempts = 10

// Update reads the link id, applies apply and writes it back if no one
// changed it in between (casScript), else starts over.
func (s *RedisStore) Update(ctx context.Context, id string, apply func(*portaldomain.Link) (bool, error)) (portaldomain.Link, bool, error) {
	for range updateAttempts {
		l, old, ok, err := s.read(ctx, id)
		if err != nil || !ok {
			return portaldomain.Link{}, ok, err
		}
		changed, err := apply(&l)
		if err != nil || !changed {
			return l, true, err
		}
		value, err := json.Marshal(linkRecord(l))
		if err != nil {
			return portaldomain.Link{}, false, fault.Wrap(fault.Internal, err, "store a portal link")
		}
		written, err := casScript.Run(ctx, s.rdb, []string{linkKey(id)}, old, value, l.ForgetAt().UnixMilli()).Int()
		if err != nil {
			return portaldomain.Link{}, false, redisconn.Outage("change a portal link", err, unavailable)
		}
		if written == 1 {
			return l, true, nil
		}
	}
	return portaldomain.Link{}, false, fault.New(fault.Aborted, "the portal link %s kept changing while this request changed it: retry", id)
}
