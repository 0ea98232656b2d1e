package ltinonce

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/liveproctor/workspaces/pkg/fault"
	"github.com/liveproctor/workspaces/services/workspace/internal/app"
)

// RedisLogins keeps LTI 1.3 logins until their launch, each under its own
// key, so that any replica's launch finds the login any replica started:
// written with SET PX, taken with GETDEL, so of two launches presenting
// one state only one gets the login. One key per command, so it works on
// a Cluster.
type RedisLogins struct {
	rdb redis.UniversalClient
}

var _ app.Lti13Logins = (*RedisLogins)(nil)

// NewRedisLogins returns a login store over rdb.
func NewRedisLogins(rdb redis.UniversalClient) *RedisLogins { return &RedisLogins{rdb: rdb} }

// errLoginsUnavailable: a login cannot be started, or a launch checked,
// without the store.
const errLoginsUnavailable = "LTI 1.3 logins cannot be handled right now (the login store is unreachable): launch again in a minute"

// loginRecord is a login as stored: JSON, so that a reader of Redis sees
// what it is.
type loginRecord struct {
	Nonce          string    `json:"nonce"`
	WorkspaceID    string    `json:"workspaceId"`
	RegistrationID string    `json:"registrationId"`
	CreatedAt      time.Time `json:"createdAt"`
}

// Put stores l under state for ttl.
func (s *RedisLogins) Put(ctx context.Context, state string, l app.Lti13Login, ttl time.Duration) error {
	value, err := json.Marshal(loginRecord(l))
	if err != nil {
		return fault.Wrap(fault.Internal, err, "store an LTI 1.3 login")
	}
	if err := s.rdb.Set(ctx, LoginKey(state), value, ttl).Err(); err != nil {
		return fault.Wrap(fault.Unavailable, fmt.Errorf("store an LTI 1.3 login: %w", err), errLoginsUnavailable)
	}
	return nil
}

// Take returns the login stored under state and removes it, in one
// command.
func (s *RedisLogins) Take(ctx context.Context, state string) (app.Lti13Login, bool, error) {
	value, err := s.rdb.GetDel(ctx, LoginKey(state)).Bytes()
	switch {
	case errors.Is(err, redis.Nil):
		return app.Lti13Login{}, false, nil
	case err != nil:
		return app.Lti13Login{}, false, fault.Wrap(fault.Unavailable, fmt.Errorf("take an LTI 1.3 login: %w", err), errLoginsUnavailable)
	}
	var rec loginRecord
	if err := json.Unmarshal(value, &rec); err != nil {
		return app.Lti13Login{}, false, fault.Wrap(fault.Internal, err, "read an LTI 1.3 login")
	}
	return app.Lti13Login(rec), true, nil
}

// LoginKey is the Redis key of a login: lti13:login:<SHA-256(state) in
// hex>. The state is a bearer secret the browser holds; the key names its
// digest only, so reading Redis gives no state to present.
func LoginKey(state string) string {
	sum := sha256.Sum256([]byte(state))
	return "lti13:login:" + hex.EncodeToString(sum[:])
}
