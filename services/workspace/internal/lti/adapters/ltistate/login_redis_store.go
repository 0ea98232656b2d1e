package ltistate

import (
	"context"
	"time"

	"github.com/redis/go-redis/v9"

	ltiapp "github.com/liveproctor/workspaces/services/workspace/internal/lti/app"
)

// RedisLogins keeps LTI 1.3 logins until their launch, so that any
// replica's launch finds the login any replica started, and only one
// launch presenting a state gets its login (redisOnce). A launch reads the
// login before it takes it, to hold its browser to the login's proof
// first. At most max logins are pending at once across every replica
// (pendingLogins): a login initiation is anonymous, and a flood of them
// would otherwise fill Redis.
type RedisLogins struct {
	once    redisOnce[loginRecord]
	pending pendingLogins
}

var _ ltiapp.LTI13LoginStore = (*RedisLogins)(nil)

// NewRedisLogins returns a login store over rdb holding at most max
// pending logins.
func NewRedisLogins(rdb redis.UniversalClient, max int) *RedisLogins {
	return &RedisLogins{
		once:    redisOnce[loginRecord]{rdb: rdb, prefix: loginPrefix, what: "an LTI 1.3 login", unavailable: errLoginsUnavailable},
		pending: pendingLogins{rdb: rdb, max: max},
	}
}

// errLoginsUnavailable: a login cannot be started, or a launch checked,
// without the store.
const errLoginsUnavailable = "LTI 1.3 logins cannot be handled right now (the login store is unavailable): launch again in a minute"

// loginRecord is a login as stored: JSON, so that a reader of Redis sees
// what it is.
type loginRecord struct {
	Nonce          string    `json:"nonce"`
	WorkspaceID    string    `json:"workspaceId"`
	RegistrationID string    `json:"registrationId"`
	CreatedAt      time.Time `json:"createdAt"`
	StorageTarget  string    `json:"storageTarget,omitempty"`
	// PendingBucket is the bucket of PendingLoginsKey the login is counted
	// in, given back when it is taken; logins stored before the cap have
	// none.
	PendingBucket int64 `json:"pendingBucket,omitempty"`
}

func (r loginRecord) login() ltiapp.LTI13Login {
	return ltiapp.LTI13Login{
		Nonce: r.Nonce, WorkspaceID: r.WorkspaceID, RegistrationID: r.RegistrationID, CreatedAt: r.CreatedAt, StorageTarget: r.StorageTarget,
	}
}

// Put counts l as pending, or refuses it at the cap, then stores it under
// state for ttl; a login that could not be stored gives its slot back.
func (s *RedisLogins) Put(ctx context.Context, state string, l ltiapp.LTI13Login, ttl time.Duration) error {
	bucket, err := s.pending.acquire(ctx, ttl)
	if err != nil {
		return err
	}
	rec := loginRecord{
		Nonce: l.Nonce, WorkspaceID: l.WorkspaceID, RegistrationID: l.RegistrationID, CreatedAt: l.CreatedAt, StorageTarget: l.StorageTarget,
		PendingBucket: bucket,
	}
	if err := s.once.put(ctx, state, rec, ttl); err != nil {
		s.pending.release(context.WithoutCancel(ctx), bucket)
		return err
	}
	return nil
}

// Get returns the login stored under state and leaves it (GET).
func (s *RedisLogins) Get(ctx context.Context, state string) (ltiapp.LTI13Login, bool, error) {
	rec, ok, err := s.once.get(ctx, state)
	return rec.login(), ok, err
}

// Take returns the login stored under state and removes it, in one
// command (GETDEL): of two launches that both proved their browser, one
// gets it. The login is no longer pending: its slot is given back.
func (s *RedisLogins) Take(ctx context.Context, state string) (ltiapp.LTI13Login, bool, error) {
	rec, ok, err := s.once.take(ctx, state)
	if ok && rec.PendingBucket > 0 {
		s.pending.release(context.WithoutCancel(ctx), rec.PendingBucket)
	}
	return rec.login(), ok, err
}

// LoginKey is the Redis key of a login: lti13:login:<SHA-256(state) in
// hex>. The state is a bearer secret the browser holds; the key names its
// digest only, so reading Redis gives no state to present.
func LoginKey(state string) string {
	return onceKey(loginPrefix, state)
}

// loginPrefix starts the keys of this store.
const loginPrefix = "lti13:login:"
