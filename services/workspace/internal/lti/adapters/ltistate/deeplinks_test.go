package ltistate_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/liveproctor/workspaces/pkg/fault"
	"github.com/liveproctor/workspaces/services/workspace/internal/lti/adapters/ltistate"
	ltiapp "github.com/liveproctor/workspaces/services/workspace/internal/lti/app"
)

var deepLink = ltiapp.LTI13DeepLink{
	WorkspaceID: "district-7", RegistrationID: "7d1c2a4e-reg", ClientID: "10000000000001",
	PlatformIssuer: "https://canvas.instructure.com", DeploymentID: "1:abc",
	ReturnURL: "https://canvas.example/courses/1/deep_linking_response", Data: `{"csrf":"çà 🧪"}`,
	LineItem: true, CreatedAt: time.Date(2026, 11, 25, 9, 30, 0, 123e6, time.UTC),
}

func TestMemoryDeepLinks(t *testing.T) {
	onceContract(t, ltistate.NewMemoryDeepLinks(1000, nil), deepLink)

	now := time.Unix(1_800_000_000, 0)
	s := ltistate.NewMemoryDeepLinks(1, func() time.Time { return now })
	ctx := context.Background()
	if err := s.Put(ctx, "a", deepLink, time.Minute); err != nil {
		t.Fatal(err)
	}
	if err := s.Put(ctx, "b", deepLink, time.Minute); fault.KindOf(err) != fault.Unavailable {
		t.Fatalf("Put on a full store = %v, want Unavailable", err)
	}
	now = now.Add(time.Minute)
	if _, ok, _ := s.Take(ctx, "a"); ok {
		t.Fatal("an expired request came back")
	}
}

func TestRedisDeepLinks(t *testing.T) {
	_, rdb := startRedis(t)
	s := ltistate.NewRedisDeepLinks(rdb)
	onceContract(t, s, deepLink)

	// The key is a digest of the id, never the id; the expiry is the one
	// asked for.
	ctx := context.Background()
	id := "c2VjcmV0LWxvb2tpbmctaWQtb2YtMzItYnl0ZXMtLS0"
	if err := s.Put(ctx, id, deepLink, time.Hour); err != nil {
		t.Fatal(err)
	}
	keys, err := rdb.Keys(ctx, "*").Result()
	if err != nil || len(keys) != 1 || keys[0] != ltistate.DeepLinkKey(id) || !strings.HasPrefix(keys[0], "lti13:deeplink:") ||
		strings.Contains(keys[0], id) {
		t.Fatalf("keys = %q, %v; want only %q", keys, err, ltistate.DeepLinkKey(id))
	}
	raw, err := rdb.Get(ctx, keys[0]).Bytes()
	var stored map[string]any
	if err != nil || json.Unmarshal(raw, &stored) != nil || stored["data"] != deepLink.Data || stored["platformIssuer"] != deepLink.PlatformIssuer ||
		stored["lineItem"] != true {
		t.Fatalf("stored value %s, %v", raw, err)
	}
	if ttl, err := rdb.PTTL(ctx, keys[0]).Result(); err != nil || ttl <= 59*time.Minute || ttl > time.Hour {
		t.Fatalf("PTTL = %v, %v; want about 1h", ttl, err)
	}
}
