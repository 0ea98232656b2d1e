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

// RedisDeepLinks keeps LTI 1.3 deep-linking requests until their reply,
// each under its own key, as RedisLogins keeps logins: SET PX, then
// GETDEL, so of two replies presenting one id only one gets the request.
type RedisDeepLinks struct {
	rdb redis.UniversalClient
}

var _ app.Lti13DeepLinks = (*RedisDeepLinks)(nil)

// NewRedisDeepLinks returns a deep-linking request store over rdb.
func NewRedisDeepLinks(rdb redis.UniversalClient) *RedisDeepLinks { return &RedisDeepLinks{rdb: rdb} }

const errDeepLinksUnavailable = "LTI deep-linking requests cannot be handled right now (their store is unreachable): try again in a minute"

// deepLinkRecord is a request as stored: JSON, so that a reader of Redis
// sees what it is.
type deepLinkRecord struct {
	WorkspaceID    string    `json:"workspaceId"`
	RegistrationID string    `json:"registrationId"`
	ClientID       string    `json:"clientId"`
	PlatformIssuer string    `json:"platformIssuer"`
	DeploymentID   string    `json:"deploymentId"`
	ReturnURL      string    `json:"returnUrl"`
	Data           string    `json:"data"`
	CreatedAt      time.Time `json:"createdAt"`
}

// Put stores l under id for ttl.
func (s *RedisDeepLinks) Put(ctx context.Context, id string, l app.Lti13DeepLink, ttl time.Duration) error {
	value, err := json.Marshal(deepLinkRecord(l))
	if err != nil {
		return fault.Wrap(fault.Internal, err, "store an LTI deep-linking request")
	}
	if err := s.rdb.Set(ctx, DeepLinkKey(id), value, ttl).Err(); err != nil {
		return fault.Wrap(fault.Unavailable, fmt.Errorf("store an LTI deep-linking request: %w", err), errDeepLinksUnavailable)
	}
	return nil
}

// Take returns the request stored under id and removes it, in one command.
func (s *RedisDeepLinks) Take(ctx context.Context, id string) (app.Lti13DeepLink, bool, error) {
	value, err := s.rdb.GetDel(ctx, DeepLinkKey(id)).Bytes()
	switch {
	case errors.Is(err, redis.Nil):
		return app.Lti13DeepLink{}, false, nil
	case err != nil:
		return app.Lti13DeepLink{}, false, fault.Wrap(fault.Unavailable, fmt.Errorf("take an LTI deep-linking request: %w", err), errDeepLinksUnavailable)
	}
	var rec deepLinkRecord
	if err := json.Unmarshal(value, &rec); err != nil {
		return app.Lti13DeepLink{}, false, fault.Wrap(fault.Internal, err, "read an LTI deep-linking request")
	}
	return app.Lti13DeepLink(rec), true, nil
}

// DeepLinkKey is the Redis key of a deep-linking request:
// lti13:deeplink:<SHA-256(id) in hex>. The id is a bearer secret; the key
// names its digest only.
func DeepLinkKey(id string) string {
	sum := sha256.Sum256([]byte(id))
	return "lti13:deeplink:" + hex.EncodeToString(sum[:])
}
