package e2e

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"net/http"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/liveproctor/workspaces/deploy/local/stack"
	"github.com/liveproctor/workspaces/pkg/testenv"
)

// startReplicas starts a stack with the limits on (extra settings), and a
// second set of replicas of every service over the same stores.
func startReplicas(t *testing.T, extra ...string) (*stack.Stack, *stack.Stack) {
	t.Helper()
	on := append([]string{"RATE_LIMIT=100", "AUTH_FAILURE_LIMIT=10", "AUTH_FAILURE_LIMIT_PER_ADDRESS=100"}, extra...)
	first := startOwnStack(t, on...)
	var logs bytes.Buffer
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	second, err := stack.Start(ctx, stack.Options{
		BinDir: binDir, DataDir: filepath.Join(t.TempDir(), "second"),
		MongoURI: first.MongoURI, RedisAddr: first.RedisAddr,
		Env: append(append([]string(nil), stackEnv...), on...), Output: &logs,
	})
	if err != nil {
		t.Fatalf("start the second replicas: %v\n%s", err, logs.String())
	}
	t.Cleanup(func() {
		_ = second.Close()
		if t.Failed() {
			t.Logf("second replicas' output:\n%s", logs.String())
		}
	})
	return first, second
}

// wantThrottled checks a 429: the error shape, Retry-After, and the
// rate-limit fields of the named policy.
func wantThrottled(t *testing.T, r *response, policy string) {
	t.Helper()
	r.wantError(http.StatusTooManyRequests, "RESOURCE_EXHAUSTED", "")
	if s, err := strconv.Atoi(r.header.Get("Retry-After")); err != nil || s < 1 {
		t.Fatalf("%s: Retry-After %q", r.what, r.header.Get("Retry-After"))
	}
	if got := r.header.Get("RateLimit-Policy"); !strings.HasPrefix(got, `"`+policy+`";q=`) {
		t.Fatalf("%s: RateLimit-Policy %q, want policy %s", r.what, got, policy)
	}
	if got := r.header.Get("RateLimit"); !strings.HasPrefix(got, `"`+policy+`";r=0;t=`) {
		t.Fatalf("%s: RateLimit %q", r.what, got)
	}
}

// A key pair over its limit gets 429 with Retry-After and the rate-limit
// fields on every replica, while another key pair keeps getting 200; the
// login route counts against the same limit; a manager can give the
// workspace a limit of its own, which applies at once on the replica that
// changed it.
func TestKeyPairRateLimitIsSharedByReplicas(t *testing.T) {
	// One request a second refills the burst of 6 far slower than this
	// test sends; two separate limits would let 12 through. The root key
	// pair is under the same limit: this test makes five calls with it.
	s1, s2 := startReplicas(t, "RATE_LIMIT=1", "RATE_LIMIT_BURST=6", "CREDENTIAL_CACHE_TTL=1s")
	root := asRoot(t)
	w := root.on(s1).create("limited", nil).server(t)
	other := root.on(s2).create("unlimited", nil).server(t)

	passed := 0
	var refused *response
	for i := 0; refused == nil && i < 40; i++ {
		replica := s1
		if i%2 == 1 {
			replica = s2
		}
		r := w.on(replica).get("/api/workspace/limited")
		switch r.status {
		case http.StatusOK:
			passed++
			if p := r.header.Get("RateLimit-Policy"); p != `"keypair";q=6;w=6` {
				t.Fatalf("RateLimit-Policy %q", p)
			}
			if r.header.Get("RateLimit") == "" {
				t.Fatal("no RateLimit field on a 200")
			}
		default:
			refused = r
		}
	}
	if refused == nil || passed < 6 || passed >= 12 {
		t.Fatalf("%d requests passed before a refusal (%v); want the shared burst of 6 (and fewer than 12)", passed, refused != nil)
	}
	wantThrottled(t, refused, "keypair")
	wantThrottled(t, w.on(s2).post("/api/login/sdk", map[string]any{"email": "ada@example.com", "workspaceId": "limited"}), "keypair")
	other.on(s1).get("/api/workspace/unlimited").ok(nil)
	other.on(s2).get("/api/workspace/unlimited").ok(nil)

	// The manager raises the limit: at once on that replica.
	var got struct {
		RateLimit *struct {
			RequestsPerSecond int `json:"requestsPerSecond"`
			Burst             int `json:"burst"`
		} `json:"rateLimit"`
	}
	root.on(s1).put("/api/workspace/limited", map[string]any{"rateLimit": map[string]any{"requestsPerSecond": 1000, "burst": 1000}}).ok(&got)
	if got.RateLimit == nil || got.RateLimit.RequestsPerSecond != 1000 || got.RateLimit.Burst != 1000 {
		t.Fatalf("rateLimit after the update: %+v", got.RateLimit)
	}
	r := w.on(s1).get("/api/workspace/limited").wantStatus(http.StatusOK)
	if p := r.header.Get("RateLimit-Policy"); p != `"keypair";q=1000;w=1` {
		t.Fatalf("RateLimit-Policy after the raise: %q", p)
	}
	// The other replica, within its credential cache's TTL.
	testenv.Eventually(t, 10*time.Second, func() error {
		if r := w.on(s2).get("/api/workspace/limited"); r.status != http.StatusOK {
			return fmt.Errorf("status %d: %s", r.status, r.body)
		}
		return nil
	}, "the raised limit on the other replica")
	// And the login route, through the auth service's own cache.
	testenv.Eventually(t, 10*time.Second, func() error {
		if r := w.on(s2).post("/api/login/sdk", map[string]any{"email": "ada@example.com", "workspaceId": "limited"}); r.status != http.StatusOK {
			return fmt.Errorf("status %d: %s", r.status, r.body)
		}
		return nil
	}, "a login under the raised limit")

	// A workspace cannot set its own.
	w.on(s1).put("/api/workspace/limited", map[string]any{"rateLimit": map[string]any{"requestsPerSecond": 5, "burst": 5}}).
		wantError(http.StatusForbidden, "PERMISSION_DENIED", "")
	// Bad limits name the field; null removes the limit.
	root.on(s1).put("/api/workspace/limited", map[string]any{"rateLimit": map[string]any{"requestsPerSecond": 0, "burst": 5}}).
		wantError(http.StatusBadRequest, "INVALID_ARGUMENT", "rateLimit.requestsPerSecond")
	got.RateLimit = nil
	r = root.on(s1).put("/api/workspace/limited", map[string]any{"rateLimit": nil}).ok(&got)
	if got.RateLimit != nil || bytes.Contains(r.body, []byte("rateLimit")) {
		t.Fatalf("rateLimit after null: %+v", got.RateLimit)
	}
}

// Failed authentications from one address get it 429 before any credential
// check, on the workspace routes, the login route (whose credentials the
// auth service has the workspace service check, forwarding the address) and
// the session route; other addresses, even with the same app key, are not
// slowed, and a client's own X-Forwarded-For changes nothing.
func TestFailedAuthenticationsBlockOnlyThatAddress(t *testing.T) {
	s, _ := startReplicas(t, "AUTH_FAILURE_LIMIT=3", "AUTH_FAILURE_LIMIT_PER_ADDRESS=5", "AUTH_FAILURE_WINDOW=5m")
	root := asRoot(t).on(s)
	res := root.create("guarded", nil)
	key, secret := res.AppKeys.Server.ConsumerKey, res.AppKeys.Server.SharedSecret

	guesser := as(t, key, "wrong-secret").on(s).from("127.0.0.2")
	for range 3 {
		guesser.get("/api/workspace/guarded").wantError(http.StatusUnauthorized, "UNAUTHENTICATED", "")
	}
	owner := as(t, key, secret).on(s)
	wantThrottled(t, owner.from("127.0.0.2").get("/api/workspace/guarded"), "auth-failures")
	wantThrottled(t, owner.from("127.0.0.2").do(http.MethodGet, "/api/workspace/guarded", nil, "X-Forwarded-For", "127.0.0.9"), "auth-failures")
	wantThrottled(t, owner.from("127.0.0.2").post("/api/login/sdk", map[string]any{"email": "ada@example.com", "workspaceId": "guarded"}), "auth-failures")
	owner.from("127.0.0.3").get("/api/workspace/guarded").ok(nil)

	// Guesses at the login route are counted too, and block the address
	// even for a login whose access the auth service remembers (it checks
	// such a login's limits in the same Redis script as the token's save).
	tok := owner.from("127.0.0.4").login("ada@example.com", "guarded")
	loginGuesser := as(t, key, "wrong-secret").on(s).from("127.0.0.3")
	for range 3 {
		loginGuesser.post("/api/login/sdk", map[string]any{"email": "ada@example.com", "workspaceId": "guarded"}).
			wantError(http.StatusUnauthorized, "UNAUTHENTICATED", "")
	}
	wantThrottled(t, owner.from("127.0.0.3").post("/api/login/sdk", map[string]any{"email": "ada@example.com", "workspaceId": "guarded"}), "auth-failures")
	owner.from("127.0.0.4").login("ada@example.com", "guarded")

	// Guessed SDK tokens: five from one address, then that address is refused.
	for range 5 {
		anonymous(t).on(s).from("127.0.0.5").do(http.MethodGet, "/api/sdk/session", nil, "Authorization", "Bearer "+randomToken(t)).
			wantError(http.StatusUnauthorized, "UNAUTHENTICATED", "")
	}
	wantThrottled(t, anonymous(t).on(s).from("127.0.0.5").do(http.MethodGet, "/api/sdk/session", nil, "Authorization", "Bearer "+tok.Auth), "auth-failures")
	anonymous(t).on(s).from("127.0.0.6").do(http.MethodGet, "/api/sdk/session", nil, "Authorization", "Bearer "+tok.Auth).ok(nil)
}

// With Redis down the limits still hold, each replica counting on its own:
// never a 500, never a wait; once Redis is back they are counted there.
func TestLimitsHoldWhileRedisIsDown(t *testing.T) {
	s := startOwnStack(t, "RATE_LIMIT=1", "RATE_LIMIT_BURST=3", "AUTH_FAILURE_LIMIT=2", "AUTH_FAILURE_LIMIT_PER_ADDRESS=100")
	res := asRoot(t).on(s).create("fallback", nil)
	w := res.server(t).on(s)
	if err := s.Redis.Stop(); err != nil {
		t.Fatal(err)
	}
	passed := 0
	var refused *response
	for i := 0; refused == nil && i < 20; i++ {
		if r := w.get("/api/workspace/fallback"); r.status == http.StatusOK {
			passed++
		} else {
			refused = r
		}
	}
	if refused == nil || passed < 3 || passed > 5 {
		t.Fatalf("with Redis down %d passed before a refusal; want the burst of 3", passed)
	}
	wantThrottled(t, refused, "keypair")
	guesser := as(t, res.AppKeys.Server.ConsumerKey, "wrong").on(s).from("127.0.0.2")
	guesser.get("/api/workspace/fallback").wantError(http.StatusUnauthorized, "UNAUTHENTICATED", "")
	guesser.get("/api/workspace/fallback").wantError(http.StatusUnauthorized, "UNAUTHENTICATED", "")
	wantThrottled(t, guesser.get("/api/workspace/fallback"), "auth-failures")

	if err := s.Redis.Restart(context.Background()); err != nil {
		t.Fatal(err)
	}
	rdb := redis.NewClient(&redis.Options{Addr: s.RedisAddr})
	defer rdb.Close()
	fresh := asRoot(t).on(s)
	testenv.Eventually(t, 30*time.Second, func() error {
		fresh.get("/api/workspace/fallback")
		keys, err := rdb.Keys(context.Background(), "gcra:keypair:"+rootKey+":*").Result()
		if err == nil && len(keys) == 0 {
			return errors.New("no count for the root key pair in Redis")
		}
		return err
	}, "the limits counted in Redis again")
}

func randomToken(t *testing.T) string {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	return base64.StdEncoding.EncodeToString(b)
}
