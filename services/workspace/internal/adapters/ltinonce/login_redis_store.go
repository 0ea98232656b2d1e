package ltinonce

import (
	"context"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/liveproctor/workspaces/services/workspace/internal/app"
)

// RedisLogins keeps LTI 1.3 logins until their launch, so that any
// replica's launch finds the login any replica started, and only one
// launch presenting a state gets its login (redisOnce). A launch reads the
// login before it takes it, to hold its browser to the login's proof
// first.
type RedisLogins struct {
	once redisOnce[loginRecord]
}

var _ app.Lti13Logins = (*RedisLogins)(nil)

// NewRedisLogins returns a login store over rdb.
func NewRedisLogins(rdb redis.UniversalClient) *RedisLogins {
	return &RedisLogins{once: redisOnce[loginRecord]{rdb: rdb, prefix: loginPrefix, what: "an LTI 1.3 login", unavailable: errLoginsUnavailable}}
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
}

// Put stores l under state for ttl.
func (s *RedisLogins) Put(ctx context.Context, state string, l app.Lti13Login, ttl time.Duration) error {
	return s.once.put(ctx, state, loginRecord(l), ttl)
}

// Get returns the login stored under state and leaves it (GET).
func (s *RedisLogins) Get(ctx context.Context, state string) (app.Lti13Login, bool, error) {
	rec, ok, err := s.once.get(ctx, state)
	return app.Lti13Login(rec), ok, err
}

// Take returns the login stored under state and removes it, in one
// command (GETDEL): of two launches that both proved their browser, one
// gets it.
func (s *RedisLogins) Take(ctx context.Context, state string) (app.Lti13Login, bool, error) {
	rec, ok, err := s.once.take(ctx, state)
	return app.Lti13Login(rec), ok, err
}

// LoginKey is the Redis key of a login: lti13:login:<SHA-256(state) in
// hex>. The state is a bearer secret the browser holds; the key names its
// digest only, so reading Redis gives no state to present.
func LoginKey(state string) string {
	return onceKey(loginPrefix, state)
}

// loginPrefix starts the keys of this store.
const loginPrefix = "lti13:login:"
