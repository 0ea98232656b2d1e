package ltistate_test

import (
	"context"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/liveproctor/workspaces/pkg/fault"
	"github.com/liveproctor/workspaces/pkg/testenv"
	"github.com/liveproctor/workspaces/services/workspace/internal/lti/adapters/ltistate"
	ltiapp "github.com/liveproctor/workspaces/services/workspace/internal/lti/app"
)

var login = ltiapp.LTI13Login{
	Nonce: "bm9uY2Utb2YtMzItYnl0ZXMtLS0tLS0tLS0tLS0tLS0", WorkspaceID: "district-7", RegistrationID: "7d1c2a4e-reg",
	CreatedAt: time.Date(2026, 11, 25, 9, 30, 0, 123e6, time.UTC),
}

// loginsContract is what every ltiapp.LTI13LoginStore does beyond the
// single-use stores' contract: Get reads a login and leaves it, so that a
// launch whose browser's proof fails uses nothing up; of launches that
// read one login and then take it, however many race, one gets it.
func loginsContract(t *testing.T, s ltiapp.LTI13LoginStore) {
	t.Helper()
	onceContract(t, s, login)
	ctx := context.Background()
	if _, ok, err := s.Get(ctx, "never-stored"); ok || err != nil {
		t.Fatalf("Get of a state never stored = %v, %v; want nothing", ok, err)
	}
	if err := s.Put(ctx, "read", login, time.Minute); err != nil {
		t.Fatal(err)
	}
	for range 2 {
		if got, ok, err := s.Get(ctx, "read"); !ok || err != nil || got != login {
			t.Fatalf("Get = %+v, %v, %v; want %+v, left in the store", got, ok, err, login)
		}
	}
	if got, ok, err := s.Take(ctx, "read"); !ok || err != nil || got != login {
		t.Fatalf("Take after Get = %+v, %v, %v; want %+v", got, ok, err, login)
	}
	if _, ok, err := s.Get(ctx, "read"); ok || err != nil {
		t.Fatalf("Get of a taken login = %v, %v; want nothing", ok, err)
	}
	if err := s.Put(ctx, "raced", login, time.Minute); err != nil {
		t.Fatal(err)
	}
	var wins atomic.Int32
	var wg sync.WaitGroup
	for range 20 {
		wg.Go(func() {
			if _, ok, err := s.Get(ctx, "raced"); err != nil || !ok {
				return
			}
			if _, ok, err := s.Take(ctx, "raced"); err == nil && ok {
				wins.Add(1)
			}
		})
	}
	wg.Wait()
	if wins.Load() != 1 {
		t.Fatalf("%d of 20 launches reading then taking one login took it, want 1", wins.Load())
	}
}

func TestMemoryLogins(t *testing.T) {
	loginsContract(t, ltistate.NewMemoryLogins(1000, nil))
}

// A login expires with its TTL; a full store refuses a new login rather
// than drop a live one, and makes room from the expired.
func TestMemoryLoginsExpireAndAreBounded(t *testing.T) {
	now := time.Unix(1_800_000_000, 0)
	s := ltistate.NewMemoryLogins(2, func() time.Time { return now })
	ctx := context.Background()
	for _, state := range []string{"a", "b"} {
		if err := s.Put(ctx, state, login, time.Minute); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Put(ctx, "c", login, time.Minute); fault.KindOf(err) != fault.Unavailable {
		t.Fatalf("Put on a full store = %v, want Unavailable", err)
	}
	now = now.Add(time.Minute)
	if _, ok, err := s.Get(ctx, "a"); ok || err != nil {
		t.Fatalf("an expired login: Get = %v, %v; want nothing", ok, err)
	}
	if _, ok, err := s.Take(ctx, "a"); ok || err != nil {
		t.Fatalf("an expired login: Take = %v, %v; want nothing", ok, err)
	}
	if err := s.Put(ctx, "c", login, time.Minute); err != nil {
		t.Fatalf("after expiry made room: %v", err)
	}
	if _, ok, _ := s.Take(ctx, "c"); !ok {
		t.Fatal("the login put after expiry is not there")
	}
}

func TestRedisLogins(t *testing.T) {
	_, rdb := startRedis(t)
	s := ltistate.NewRedisLogins(rdb, 1000)
	loginsContract(t, s)

	// The key is a digest of the state, never the state; the value is
	// the login as JSON, with the bucket it is counted in as pending; the
	// expiry is the one asked for.
	ctx := context.Background()
	state := "c2VjcmV0LWxvb2tpbmctc3RhdGUtb2YtMzItYnl0ZXM"
	if err := s.Put(ctx, state, login, time.Hour); err != nil {
		t.Fatal(err)
	}
	keys, err := rdb.Keys(ctx, "lti13:login:*").Result()
	if err != nil || len(keys) != 1 || keys[0] != ltistate.LoginKey(state) {
		t.Fatalf("keys = %q, %v; want only %q", keys, err, ltistate.LoginKey(state))
	}
	digest, ok := strings.CutPrefix(keys[0], "lti13:login:")
	if _, err := hex.DecodeString(digest); !ok || err != nil || len(digest) != 64 || strings.Contains(keys[0], state) {
		t.Fatalf("key %q: want lti13:login: and a SHA-256 in hex", keys[0])
	}
	raw, err := rdb.Get(ctx, keys[0]).Bytes()
	var stored map[string]any
	if err != nil || json.Unmarshal(raw, &stored) != nil || strings.Contains(string(raw), state) ||
		stored["nonce"] != login.Nonce || stored["workspaceId"] != "district-7" || stored["registrationId"] != "7d1c2a4e-reg" ||
		stored["createdAt"] != "2026-11-25T09:30:00.123Z" || stored["pendingBucket"] == nil {
		t.Fatalf("stored value %s, %v", raw, err)
	}
	if ttl, err := rdb.PTTL(ctx, keys[0]).Result(); err != nil || ttl <= 59*time.Minute || ttl > time.Hour {
		t.Fatalf("PTTL = %v, %v; want about 1h", ttl, err)
	}
	// Redis forgets it at the expiry: the launch then finds nothing.
	if err := s.Put(ctx, "short", login, 50*time.Millisecond); err != nil {
		t.Fatal(err)
	}
	testenv.Eventually(t, 5*time.Second, func() error {
		if n, err := rdb.Exists(ctx, ltistate.LoginKey("short")).Result(); err != nil || n != 0 {
			return fmt.Errorf("the login is still stored (%d, %v)", n, err)
		}
		return nil
	}, "Redis expiring the login")
	if _, ok, err := s.Take(ctx, "short"); ok || err != nil {
		t.Fatalf("after the expiry: Take = %v, %v; want nothing", ok, err)
	}
}

// With Redis down no login can be started, read nor taken: Unavailable,
// saying so, and nothing of the state.
func TestRedisLoginsDownIsUnavailable(t *testing.T) {
	srv, rdb := startRedis(t)
	s := ltistate.NewRedisLogins(rdb, 1000)
	if err := srv.Stop(); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	for name, err := range map[string]error{
		"Put":  s.Put(ctx, "the-state", login, time.Minute),
		"Get":  func() error { _, _, err := s.Get(ctx, "the-state"); return err }(),
		"Take": func() error { _, _, err := s.Take(ctx, "the-state"); return err }(),
	} {
		e, ok := fault.As(err)
		if !ok || e.Kind != fault.Unavailable || strings.Contains(e.Message, "the-state") || !strings.Contains(e.Message, "login store is unavailable") {
			t.Fatalf("%s with Redis down = %v, want Unavailable about the login store", name, err)
		}
	}
}
