package ltistate_test

import (
	"context"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/liveproctor/workspaces/pkg/fault"
	"github.com/liveproctor/workspaces/pkg/testenv"
	"github.com/liveproctor/workspaces/services/workspace/internal/lti/adapters/ltistate"
	ltiapp "github.com/liveproctor/workspaces/services/workspace/internal/lti/app"
)

// storeContract is what every ltiapp.NonceStore does: a nonce is used once
// per consumer key, however many callers race for it; other keys and other
// nonces are independent.
func storeContract(t *testing.T, s ltiapp.NonceStore) {
	ctx := context.Background()
	use := func(key, nonce string) bool {
		t.Helper()
		ok, err := s.Use(ctx, key, nonce, time.Minute)
		if err != nil {
			t.Fatal(err)
		}
		return ok
	}
	if !use("k1", "n1") {
		t.Fatal("a new nonce was refused")
	}
	if use("k1", "n1") {
		t.Fatal("a used nonce was accepted again")
	}
	if !use("k2", "n1") || !use("k1", "n2") {
		t.Fatal("the same nonce for another key, or another nonce, was refused")
	}
	long := strings.Repeat("n", 300)
	if !use("k1", long) || use("k1", long) {
		t.Fatal("a long nonce is not used once")
	}
	var wins atomic.Int32
	var wg sync.WaitGroup
	for range 20 {
		wg.Go(func() {
			if ok, err := s.Use(ctx, "k3", "raced", time.Minute); err == nil && ok {
				wins.Add(1)
			}
		})
	}
	wg.Wait()
	if wins.Load() != 1 {
		t.Fatalf("%d of 20 concurrent uses of one nonce won, want 1", wins.Load())
	}
}

func TestMemoryStore(t *testing.T) {
	storeContract(t, ltistate.NewMemoryNonces(1000, nil))
}

func TestMemoryStoreExpiresAndBounds(t *testing.T) {
	now := time.Unix(1_800_000_000, 0)
	s := ltistate.NewMemoryNonces(2, func() time.Time { return now })
	ctx := context.Background()
	for _, n := range []string{"a", "b"} {
		if ok, err := s.Use(ctx, "k", n, time.Minute); !ok || err != nil {
			t.Fatalf("Use(%s) = %v, %v", n, ok, err)
		}
	}
	// Full of live nonces: refuse rather than forget one.
	if _, err := s.Use(ctx, "k", "c", time.Minute); fault.KindOf(err) != fault.Unavailable {
		t.Fatalf("Use on a full store = %v, want Unavailable", err)
	}
	now = now.Add(time.Minute)
	if ok, err := s.Use(ctx, "k", "a", time.Minute); !ok || err != nil {
		t.Fatalf("an expired nonce: Use = %v, %v; want it usable again", ok, err)
	}
	if ok, err := s.Use(ctx, "k", "c", time.Minute); !ok || err != nil {
		t.Fatalf("after expiry made room: Use = %v, %v", ok, err)
	}
}

func startRedis(t *testing.T) (*testenv.Server, redis.UniversalClient) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	srv, err := testenv.StartRedis(ctx, testenv.RedisOptions{Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = srv.Stop() })
	rdb := redis.NewUniversalClient(&redis.UniversalOptions{Addrs: []string{srv.Addr()}, MaxRetries: -1,
		DialTimeout: 500 * time.Millisecond, ReadTimeout: 500 * time.Millisecond, WriteTimeout: 500 * time.Millisecond})
	t.Cleanup(func() { _ = rdb.Close() })
	return srv, rdb
}

func TestRedisStore(t *testing.T) {
	_, rdb := startRedis(t)
	s := ltistate.NewRedisNonces(rdb)
	storeContract(t, s)

	// The key has the consumer key as its hash tag, no raw nonce, and the
	// expiry asked for.
	ctx := context.Background()
	if ok, err := s.Use(ctx, "3f0c", "secret-looking nonce", 10*time.Minute); !ok || err != nil {
		t.Fatalf("Use = %v, %v", ok, err)
	}
	key := ltistate.NonceKey("3f0c", "secret-looking nonce")
	if !strings.HasPrefix(key, "lti:nonce:{3f0c}:") || strings.Contains(key, "nonce:{3f0c}:secret") || len(key) != len("lti:nonce:{3f0c}:")+32 {
		t.Fatalf("key %q", key)
	}
	ttl, err := rdb.TTL(ctx, key).Result()
	if err != nil || ttl <= 9*time.Minute || ttl > 10*time.Minute {
		t.Fatalf("TTL = %v, %v; want about 10m", ttl, err)
	}
	// Once Redis forgets it (the expiry passed), the nonce is new again.
	if err := rdb.Del(ctx, key).Err(); err != nil {
		t.Fatal(err)
	}
	if ok, err := s.Use(ctx, "3f0c", "secret-looking nonce", time.Minute); !ok || err != nil {
		t.Fatalf("after expiry: Use = %v, %v", ok, err)
	}
}

// With Redis down a launch cannot be checked for a replay: Unavailable,
// with a message that says so and nothing of the nonce.
func TestRedisDownIsUnavailable(t *testing.T) {
	srv, rdb := startRedis(t)
	s := ltistate.NewRedisNonces(rdb)
	if err := srv.Stop(); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_, err := s.Use(ctx, "k", "the-nonce", time.Minute)
	e, ok := fault.As(err)
	if !ok || e.Kind != fault.Unavailable || strings.Contains(e.Message, "the-nonce") || !strings.Contains(e.Message, "replays") {
		t.Fatalf("Use with Redis down = %v, want Unavailable about replays", err)
	}
}

// A Redis that refuses writes (full under noeviction: "OOM command not
// allowed") is an outage to LTI launches and logins: Unavailable, never
// Internal. A login stored before can still be taken (GETDEL frees
// memory, and Redis allows it), and once Redis has room nonces are
// recorded again.
func TestFullRedisIsUnavailable(t *testing.T) {
	srv, rdb := startRedis(t)
	nonces := ltistate.NewRedisNonces(rdb)
	logins := ltistate.NewRedisLogins(rdb, 1000)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := logins.Put(ctx, "stored-state", ltiapp.LTI13Login{Nonce: "n", WorkspaceID: "w"}, time.Minute); err != nil {
		t.Fatal(err)
	}
	if err := testenv.SetRedisFull(ctx, srv.Addr(), true); err != nil {
		t.Fatal(err)
	}

	_, useErr := nonces.Use(ctx, "k", "the-nonce", time.Minute)
	for name, err := range map[string]error{
		"Use": useErr,
		"Put": logins.Put(ctx, "new-state", ltiapp.LTI13Login{Nonce: "n", WorkspaceID: "w"}, time.Minute),
	} {
		if e, ok := fault.As(err); !ok || e.Kind != fault.Unavailable || !strings.Contains(err.Error(), "OOM") {
			t.Errorf("%s on a full Redis = %v, want Unavailable caused by OOM", name, err)
		}
	}
	if l, ok, err := logins.Take(ctx, "stored-state"); err != nil || !ok || l.Nonce != "n" {
		t.Fatalf("Take on a full Redis = %+v, %v, %v; want the stored login", l, ok, err)
	}

	if err := testenv.SetRedisFull(ctx, srv.Addr(), false); err != nil {
		t.Fatal(err)
	}
	if ok, err := nonces.Use(ctx, "k", "the-nonce", time.Minute); !ok || err != nil {
		t.Fatalf("Use once Redis has room = %v, %v", ok, err)
	}
}

// On a 3-master Cluster each nonce, and each login, is one key in one slot:
// the stores work as on one server.
func TestRedisStoreOnCluster(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cluster, err := testenv.StartRedisCluster(ctx, t.TempDir(), 3)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cluster.Stop() })
	rdb := redis.NewUniversalClient(&redis.UniversalOptions{Addrs: cluster.Addrs(),
		DialTimeout: 500 * time.Millisecond, ReadTimeout: 500 * time.Millisecond, WriteTimeout: 500 * time.Millisecond})
	t.Cleanup(func() { _ = rdb.Close() })
	// The client learns the slots on its own time: wait until a nonce of
	// each of several keys (spread over the masters) can be written.
	testenv.Eventually(t, 30*time.Second, func() error {
		for i := range 16 {
			if err := rdb.Set(ctx, ltistate.NonceKey(strconv.Itoa(i), "probe"), 1, time.Minute).Err(); err != nil {
				return err
			}
		}
		return nil
	}, "every master of the cluster takes writes")
	storeContract(t, ltistate.NewRedisNonces(rdb))
	loginsContract(t, ltistate.NewRedisLogins(rdb, 1000))
}
