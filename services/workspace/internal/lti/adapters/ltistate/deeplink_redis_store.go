package ltistate

import (
	"context"
	"time"

	"github.com/redis/go-redis/v9"

	ltiapp "github.com/liveproctor/workspaces/services/workspace/internal/lti/app"
)

// RedisDeepLinks keeps LTI 1.3 deep-linking requests until their reply,
// each under its own key, as RedisLogins keeps logins: SET PX, then
// GETDEL, so of two replies presenting one id only one gets the request.
type RedisDeepLinks struct {
	once redisOnce[deepLinkRecord]
}

var _ ltiapp.LTI13DeepLinkStore = (*RedisDeepLinks)(nil)

// NewRedisDeepLinks returns a deep-linking request store over rdb.
func NewRedisDeepLinks(rdb redis.UniversalClient) *RedisDeepLinks {
	return &RedisDeepLinks{once: redisOnce[deepLinkRecord]{rdb: rdb, prefix: deepLinkPrefix, what: "an LTI deep-linking request", unavailable: errDeepLinksUnavailable}}
}

const errDeepLinksUnavailable = "LTI deep-linking requests cannot be handled right now (their store is unavailable): try again in a minute"

// deepLinkRecord is a request as stored: JSON, so that a reader of Redis
// sees what it is. One kept by a replica from before line items has no
// lineItem, and its reply offers none.
type deepLinkRecord struct {
	WorkspaceID    string    `json:"workspaceId"`
	RegistrationID string    `json:"registrationId"`
	ClientID       string    `json:"clientId"`
	PlatformIssuer string    `json:"platformIssuer"`
	DeploymentID   string    `json:"deploymentId"`
	ReturnURL      string    `json:"returnUrl"`
	Data           string    `json:"data"`
	LineItem       bool      `json:"lineItem,omitempty"`
	CreatedAt      time.Time `json:"createdAt"`
}

// Put stores l under id for ttl.
func (s *RedisDeepLinks) Put(ctx context.Context, id string, l ltiapp.LTI13DeepLink, ttl time.Duration) error {
	return s.once.put(ctx, id, deepLinkRecord(l), ttl)
}

// Take returns the request stored under id and removes it, in one command.
func (s *RedisDeepLinks) Take(ctx context.Context, id string) (ltiapp.LTI13DeepLink, bool, error) {
	rec, ok, err := s.once.take(ctx, id)
	return ltiapp.LTI13DeepLink(rec), ok, err
}

// DeepLinkKey is the Redis key of a deep-linking request:
// lti13:deeplink:<SHA-256(id) in hex>. The id is a bearer secret; the key
// names its digest only.
func DeepLinkKey(id string) string {
	return onceKey(deepLinkPrefix, id)
}

// deepLinkPrefix starts the keys of this store.
const deepLinkPrefix = "lti13:deeplink:"
