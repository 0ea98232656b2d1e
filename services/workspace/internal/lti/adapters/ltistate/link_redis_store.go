package ltistate

import (
	"context"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/liveproctor/workspaces/services/workspace/internal/domain"
	ltiapp "github.com/liveproctor/workspaces/services/workspace/internal/lti/app"
)

// RedisRegistrationLinks keeps LTI Dynamic Registration links until they
// are used or expire, each under its own key, as RedisLogins keeps logins:
// SET PX, then GETDEL, so of two platforms opening one link only one gets
// it.
type RedisRegistrationLinks struct {
	once redisOnce[linkRecord]
}

var _ ltiapp.RegistrationLinkStore = (*RedisRegistrationLinks)(nil)

// NewRedisRegistrationLinks returns a registration link store over rdb.
func NewRedisRegistrationLinks(rdb redis.UniversalClient) *RedisRegistrationLinks {
	return &RedisRegistrationLinks{once: redisOnce[linkRecord]{rdb: rdb, prefix: linkPrefix, what: "an LTI registration link", unavailable: errLinksUnavailable}}
}

const errLinksUnavailable = "LTI registration links cannot be made or used right now (their store is unavailable): try again in a minute"

// linkRecord is a link as stored: JSON, so that a reader of Redis sees
// what it is.
type linkRecord struct {
	ID                  string    `json:"id"`
	WorkspaceID         string    `json:"workspaceId"`
	CreatorSystem       bool      `json:"creatorSystem,omitempty"`
	CreatorWorkspaceID  string    `json:"creatorWorkspaceId"`
	CreatorAppKey       string    `json:"creatorAppKey"`
	CreatorPortalLinkID string    `json:"creatorPortalLinkId,omitempty"` // made in the administrator's portal
	CreatedAt           time.Time `json:"createdAt"`
	ExpiresAt           time.Time `json:"expiresAt"`
}

func toLinkRecord(l ltiapp.RegistrationLink) linkRecord {
	return linkRecord{
		ID: l.ID, WorkspaceID: l.WorkspaceID, CreatorSystem: l.Creator.System, CreatorWorkspaceID: l.Creator.WorkspaceID,
		CreatorAppKey: l.Creator.AppKey, CreatorPortalLinkID: l.Creator.PortalLinkID, CreatedAt: l.CreatedAt, ExpiresAt: l.ExpiresAt,
	}
}

func (r linkRecord) link() ltiapp.RegistrationLink {
	return ltiapp.RegistrationLink{
		ID: r.ID, WorkspaceID: r.WorkspaceID,
		Creator: domain.Actor{System: r.CreatorSystem, WorkspaceID: r.CreatorWorkspaceID, AppKey: r.CreatorAppKey,
			PortalLinkID: r.CreatorPortalLinkID},
		CreatedAt: r.CreatedAt, ExpiresAt: r.ExpiresAt,
	}
}

// Put stores l under secret for ttl.
func (s *RedisRegistrationLinks) Put(ctx context.Context, secret string, l ltiapp.RegistrationLink, ttl time.Duration) error {
	return s.once.put(ctx, secret, toLinkRecord(l), ttl)
}

// Take returns the link stored under secret and removes it, in one command.
func (s *RedisRegistrationLinks) Take(ctx context.Context, secret string) (ltiapp.RegistrationLink, bool, error) {
	rec, ok, err := s.once.take(ctx, secret)
	return rec.link(), ok, err
}

// RegistrationLinkKey is the Redis key of a registration link:
// lti13:reglink:<SHA-256(secret) in hex>. The secret is a bearer
// credential; the key names its digest only.
func RegistrationLinkKey(secret string) string {
	return onceKey(linkPrefix, secret)
}

// linkPrefix starts the keys of this store.
const linkPrefix = "lti13:reglink:"
