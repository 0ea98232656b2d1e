package ltistate_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/liveproctor/workspaces/services/workspace/internal/domain"
	"github.com/liveproctor/workspaces/services/workspace/internal/lti/adapters/ltistate"
	ltiapp "github.com/liveproctor/workspaces/services/workspace/internal/lti/app"
)

var registrationLink = ltiapp.RegistrationLink{
	ID: "5f0c1d2e-link", WorkspaceID: "district-7",
	Creator:   domain.Actor{WorkspaceID: "vendor", AppKey: "3b0c6c1e-7d4f-4c59-9a43-2f8e5d6b1a70"},
	CreatedAt: time.Date(2026, 11, 26, 9, 30, 0, 123e6, time.UTC),
	ExpiresAt: time.Date(2026, 11, 26, 10, 30, 0, 123e6, time.UTC),
}

func TestMemoryRegistrationLinks(t *testing.T) {
	onceContract(t, ltistate.NewMemoryRegistrationLinks(1000, nil), registrationLink)
}

func TestRedisRegistrationLinks(t *testing.T) {
	_, rdb := startRedis(t)
	s := ltistate.NewRedisRegistrationLinks(rdb)
	onceContract(t, s, registrationLink)

	// The key is a digest of the link's secret, never the secret; the
	// value says whose link it is.
	ctx := context.Background()
	secret := "c2VjcmV0LWxvb2tpbmctaWQtb2YtMzItYnl0ZXMtLS0"
	if err := s.Put(ctx, secret, registrationLink, time.Hour); err != nil {
		t.Fatal(err)
	}
	keys, err := rdb.Keys(ctx, "*").Result()
	if err != nil || len(keys) != 1 || keys[0] != ltistate.RegistrationLinkKey(secret) || !strings.HasPrefix(keys[0], "lti13:reglink:") ||
		strings.Contains(keys[0], secret) {
		t.Fatalf("keys = %q, %v; want only %q", keys, err, ltistate.RegistrationLinkKey(secret))
	}
	raw, err := rdb.Get(ctx, keys[0]).Bytes()
	var stored map[string]any
	if err != nil || json.Unmarshal(raw, &stored) != nil || stored["workspaceId"] != "district-7" || stored["creatorAppKey"] != registrationLink.Creator.AppKey {
		t.Fatalf("stored value %s, %v", raw, err)
	}
	if got, ok, err := s.Take(ctx, secret); err != nil || !ok || got != registrationLink {
		t.Fatalf("Take = %+v, %v, %v; want %+v", got, ok, err, registrationLink)
	}

	// A link made in the administrator's portal keeps its creator: the
	// registration it makes names the portal session as its actor.
	inPortal := registrationLink
	inPortal.Creator = domain.Actor{WorkspaceID: "district-7", PortalLinkID: "0f8e2c1a-3b4d-4e5f-8a9b-0c1d2e3f4a5b"}
	if err := s.Put(ctx, secret, inPortal, time.Hour); err != nil {
		t.Fatal(err)
	}
	if got, ok, err := s.Take(ctx, secret); err != nil || !ok || got != inPortal {
		t.Fatalf("Take = %+v, %v, %v; want %+v", got, ok, err, inPortal)
	}
}
