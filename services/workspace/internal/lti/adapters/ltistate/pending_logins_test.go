package ltistate_test

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/liveproctor/workspaces/pkg/fault"
	"github.com/liveproctor/workspaces/pkg/testenv"
	"github.com/liveproctor/workspaces/services/workspace/internal/lti/adapters/ltistate"
	ltiapp "github.com/liveproctor/workspaces/services/workspace/internal/lti/app"
)

// refusedPending checks err is the cap's refusal: Unavailable, with a
// Retry-After of at least a second and at most most, named in the message.
func refusedPending(t *testing.T, err error, most time.Duration) {
	t.Helper()
	e, ok := fault.As(err)
	if !ok || e.Kind != fault.Unavailable || e.RetryAfter < time.Second || e.RetryAfter > most ||
		e.Message != fmt.Sprintf("too many LTI 1.3 logins are pending: launch again in %d s", int(e.RetryAfter/time.Second)) {
		t.Fatalf("Put at the cap = %#v, want Unavailable with a Retry-After of 1s..%s named in the message", err, most)
	}
}

// pendingCount sums the pending logins' hash.
func pendingCount(t *testing.T, rdb redis.UniversalClient) int {
	t.Helper()
	fields, err := rdb.HGetAll(context.Background(), ltistate.PendingLoginsKey).Result()
	if err != nil {
		t.Fatal(err)
	}
	sum := 0
	for _, v := range fields {
		n, err := strconv.Atoi(v)
		if err != nil {
			t.Fatalf("pending hash %v", fields)
		}
		sum += n
	}
	return sum
}

// At the cap a login is refused, Unavailable with when a slot frees, and
// not stored; a launch taking a login frees its slot, and so does its
// expiry (at most a bucket, 10 s, after it).
func TestRedisLoginsPendingCap(t *testing.T) {
	_, rdb := startRedis(t)
	s := ltistate.NewRedisLogins(rdb, 3)
	ctx := context.Background()
	for _, state := range []string{"a", "b", "c"} {
		if err := s.Put(ctx, state, login, time.Minute); err != nil {
			t.Fatal(err)
		}
	}
	refusedPending(t, s.Put(ctx, "d", login, time.Minute), time.Minute+10*time.Second)
	if keys, err := rdb.Keys(ctx, "lti13:login:*").Result(); err != nil || len(keys) != 3 {
		t.Fatalf("login keys %q, %v; want the 3 accepted only", keys, err)
	}
	if pendingCount(t, rdb) != 3 {
		t.Fatalf("pending = %d, want 3", pendingCount(t, rdb))
	}
	// Reading a login leaves it pending; taking it frees its slot.
	if _, ok, err := s.Get(ctx, "a"); !ok || err != nil {
		t.Fatalf("Get = %v, %v", ok, err)
	}
	refusedPending(t, s.Put(ctx, "d", login, time.Minute), time.Minute+10*time.Second)
	if _, ok, err := s.Take(ctx, "a"); !ok || err != nil {
		t.Fatalf("Take = %v, %v", ok, err)
	}
	if err := s.Put(ctx, "d", login, time.Minute); err != nil {
		t.Fatalf("Put after a Take freed a slot: %v", err)
	}
	// A second Take of one state finds nothing and gives nothing back.
	if _, ok, _ := s.Take(ctx, "a"); ok {
		t.Fatal("a login was taken twice")
	}
	if pendingCount(t, rdb) != 3 {
		t.Fatalf("pending = %d, want 3", pendingCount(t, rdb))
	}

	// Logins that expire free their slots once their bucket ages out.
	short := ltistate.NewRedisLogins(rdb, 5)
	for _, state := range []string{"e", "f"} {
		if err := short.Put(ctx, state, login, 100*time.Millisecond); err != nil {
			t.Fatal(err)
		}
	}
	refusedPending(t, short.Put(ctx, "g", login, 100*time.Millisecond), time.Minute+10*time.Second)
	testenv.Eventually(t, 30*time.Second, func() error {
		return short.Put(ctx, "g", login, time.Minute)
	}, "the expired logins' slots freed")
}

// A login whose SET fails (here: the ACL lets this client count logins
// but not store them) gives its slot back.
func TestRedisLoginsFailedSetGivesTheSlotBack(t *testing.T) {
	srv, rdb := startRedis(t)
	ctx := context.Background()
	if err := rdb.Do(ctx, "ACL", "SETUSER", "counter", "on", ">counter-pw", "~"+ltistate.PendingLoginsKey, "+@all").Err(); err != nil {
		t.Fatal(err)
	}
	counter := redis.NewUniversalClient(&redis.UniversalOptions{Addrs: []string{srv.Addr()}, Username: "counter", Password: "counter-pw", MaxRetries: -1})
	t.Cleanup(func() { _ = counter.Close() })
	s := ltistate.NewRedisLogins(counter, 1)
	for range 3 {
		err := s.Put(ctx, "refused", login, time.Minute)
		if e, ok := fault.As(err); !ok || e.Kind != fault.Unavailable || !strings.Contains(err.Error(), "NOPERM") {
			t.Fatalf("Put without the right to SET = %v, want Unavailable caused by NOPERM", err)
		}
		if n := pendingCount(t, rdb); n != 0 {
			t.Fatalf("after a failed SET, pending = %d, want 0", n)
		}
	}
}

// A login stored before the cap (no bucket in its record) is still read
// and taken, and gives back nothing it did not take.
func TestRedisLoginsTakeRecordsWithoutBucket(t *testing.T) {
	_, rdb := startRedis(t)
	s := ltistate.NewRedisLogins(rdb, 2)
	ctx := context.Background()
	old := `{"nonce":"n-old","workspaceId":"district-7","registrationId":"7d1c2a4e-reg","createdAt":"2026-11-25T09:30:00.123Z"}`
	if err := rdb.Set(ctx, ltistate.LoginKey("old"), old, time.Minute).Err(); err != nil {
		t.Fatal(err)
	}
	if err := s.Put(ctx, "new", login, time.Minute); err != nil {
		t.Fatal(err)
	}
	want := ltiapp.LTI13Login{Nonce: "n-old", WorkspaceID: "district-7", RegistrationID: "7d1c2a4e-reg", CreatedAt: login.CreatedAt}
	if got, ok, err := s.Get(ctx, "old"); !ok || err != nil || got != want {
		t.Fatalf("Get of an old record = %+v, %v, %v; want %+v", got, ok, err, want)
	}
	if got, ok, err := s.Take(ctx, "old"); !ok || err != nil || got != want {
		t.Fatalf("Take of an old record = %+v, %v, %v; want %+v", got, ok, err, want)
	}
	if n := pendingCount(t, rdb); n != 1 {
		t.Fatalf("pending = %d after taking an uncounted login, want 1", n)
	}
}

// The memory store holds max pending logins and refuses the next with
// the time until the earliest expires; a Take frees a slot at once.
func TestMemoryLoginsPendingCap(t *testing.T) {
	now := time.Unix(1_800_000_000, 0)
	s := ltistate.NewMemoryLogins(2, func() time.Time { return now })
	ctx := context.Background()
	if err := s.Put(ctx, "a", login, time.Minute); err != nil {
		t.Fatal(err)
	}
	now = now.Add(10 * time.Second)
	if err := s.Put(ctx, "b", login, time.Minute); err != nil {
		t.Fatal(err)
	}
	err := s.Put(ctx, "c", login, time.Minute)
	refusedPending(t, err, time.Minute)
	if e, _ := fault.As(err); e.RetryAfter != 50*time.Second {
		t.Fatalf("Retry-After %v, want 50s (a expires then)", e.RetryAfter)
	}
	if _, ok, _ := s.Take(ctx, "a"); !ok {
		t.Fatal("Take of a")
	}
	if err := s.Put(ctx, "c", login, time.Minute); err != nil {
		t.Fatalf("Put after a Take freed a slot: %v", err)
	}
}

// The bytes one pending login costs in Redis: its key (MEMORY USAGE, and
// INFO memory's used_memory over many), with the pending hash. Run with
// -v to read the figures (README, docs/contract-notes.md):
//
//	go test ./services/workspace/internal/lti/adapters/ltistate/ -run TestRedisLoginsMemory -v
func TestRedisLoginsMemory(t *testing.T) {
	_, rdb := startRedis(t)
	const n = 10_000
	s := ltistate.NewRedisLogins(rdb, n)
	ctx := context.Background()
	secret := func() string {
		b := make([]byte, 32)
		_, _ = rand.Read(b)
		return base64.RawURLEncoding.EncodeToString(b)
	}
	used := func() int64 {
		info, err := rdb.InfoMap(ctx, "memory").Result()
		if err != nil {
			t.Fatal(err)
		}
		v, err := strconv.ParseInt(info["Memory"]["used_memory"], 10, 64)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	// One login first, so that the pending hash and the script exist
	// before the measure.
	first := secret()
	l := ltiapp.LTI13Login{Nonce: secret(), WorkspaceID: "district-7", RegistrationID: "0b9d5e8a-6f51-4c1e-9d57-3c2f1a7e4b60", CreatedAt: time.Now().UTC()}
	if err := s.Put(ctx, first, l, ltiapp.LTI13StateTTL); err != nil {
		t.Fatal(err)
	}
	before := used()
	for range n - 1 {
		l.Nonce = secret()
		if err := s.Put(ctx, secret(), l, ltiapp.LTI13StateTTL); err != nil {
			t.Fatal(err)
		}
	}
	perLogin := float64(used()-before) / float64(n-1)
	key, err := rdb.MemoryUsage(ctx, ltistate.LoginKey(first)).Result()
	if err != nil {
		t.Fatal(err)
	}
	hash, err := rdb.MemoryUsage(ctx, ltistate.PendingLoginsKey).Result()
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("pending logins: %d; used_memory delta / login: %.0f bytes; MEMORY USAGE of one login key: %d bytes; of %s: %d bytes",
		n, perLogin, key, ltistate.PendingLoginsKey, hash)
	if key > 512 {
		t.Fatalf("one login takes %d bytes, want well under 512", key)
	}
	refusedPending(t, s.Put(ctx, secret(), l, ltiapp.LTI13StateTTL), ltiapp.LTI13StateTTL+10*time.Second)
}
