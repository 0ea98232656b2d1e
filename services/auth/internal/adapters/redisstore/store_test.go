package redisstore_test

import (
	"context"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"net/netip"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/liveproctor/workspaces/pkg/clientaddr"
	"github.com/liveproctor/workspaces/pkg/fault"
	"github.com/liveproctor/workspaces/pkg/ratelimit"
	"github.com/liveproctor/workspaces/pkg/testenv"
	"github.com/liveproctor/workspaces/services/auth/internal/adapters/redisstore"
	"github.com/liveproctor/workspaces/services/auth/internal/app"
	"github.com/liveproctor/workspaces/services/auth/internal/domain"
	"github.com/liveproctor/workspaces/services/auth/internal/domain/tokenstoretest"
)

func TestStoreOnStandaloneRedis(t *testing.T) {
	_, rdb := startStandalone(t)
	runContract(t, rdb)
}

func TestStoreOnRedisCluster(t *testing.T) {
	runContract(t, startCluster(t))
}

// runContract is what the store must do on every kind of Redis deployment:
// what every domain.TokenStore does, then how it uses Redis.
func runContract(t *testing.T, rdb redis.UniversalClient) {
	t.Run("TokenStore", func(t *testing.T) {
		tokenstoretest.Run(t, func(_ *testing.T, now func() time.Time) domain.TokenStore {
			return redisstore.New(rdb, redisstore.WithClock(now))
		})
	})
	cases := []struct {
		name string
		run  func(*testing.T, *redisstore.Store, redis.UniversalClient)
	}{
		{"RoundTripAndTTL", roundTripAndTTL},
		{"LaunchIDBesideAnUnchangedValue", launchIDBesideAnUnchangedValue},
		{"KeysHaveTheirShapesAndNoRawToken", keysHaveTheirShapes},
		{"RevokeOne", revokeOne},
		{"RevokeUser", revokeUser},
		{"RevokeWorkspace", revokeWorkspace},
		{"DamagedTokenIsNotFound", damagedTokenIsNotFound},
		{"MissingCounterRefusesToken", missingCounterRefusesToken},
		{"CountersOutliveTokensByAtMostAStep", countersOutliveTokens},
		{"EarlierLayoutsAreNotRead", earlierLayoutsAreNotRead},
		{"RedisCommandsOfLookupAndRevoke", commandsOfLookupAndRevoke},
		{"SaveLoginSavesOnlyWhatTheLimitsLetPass", saveLogin},
		{"EverythingExpires", everythingExpires},
	}
	store := redisstore.New(rdb)
	if err := store.Ping(context.Background()); err != nil {
		t.Fatal(err)
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) { c.run(t, store, rdb) })
	}
}

var sequence atomic.Int64

// workspace returns a workspace id no other test uses.
func workspace(t *testing.T) string {
	return fmt.Sprintf("%s-%d", strings.ReplaceAll(t.Name(), "/", "-"), sequence.Add(1))
}

// issue saves a new token for email in workspace ws, living for life.
func issue(t *testing.T, s *redisstore.Store, ws, email string, life time.Duration) domain.Token {
	t.Helper()
	now := time.Now().UTC().Truncate(time.Millisecond)
	token := domain.NewToken()
	err := s.Save(context.Background(), token.Digest(),
		domain.Session{Email: email, WorkspaceID: ws, IssuedAt: now, ExpiresAt: now.Add(life)})
	if err != nil {
		t.Fatal(err)
	}
	return token
}

func wantLive(t *testing.T, s *redisstore.Store, token domain.Token, email string) {
	t.Helper()
	got, err := s.Lookup(context.Background(), token.Digest())
	if err != nil || got.Email != email {
		t.Fatalf("Lookup = %+v, %v; want %s's session", got, err, email)
	}
}

func wantNotFound(t *testing.T, s *redisstore.Store, token domain.Token) {
	t.Helper()
	if _, err := s.Lookup(context.Background(), token.Digest()); !errors.Is(err, domain.ErrTokenNotFound) {
		t.Fatalf("Lookup: error %v, want ErrTokenNotFound", err)
	}
}

func keyOf(token domain.Token) string {
	d := token.Digest()
	return "t:" + base64.RawURLEncoding.EncodeToString(d[:16])
}

// launchKeyOf is the key of the launch id of the token's session.
func launchKeyOf(token domain.Token) string { return "{" + keyOf(token) + "}:lti" }

// wantGone checks that the tokens' keys, and their launch keys, were
// deleted.
func wantGone(t *testing.T, rdb redis.UniversalClient, tokens ...domain.Token) {
	t.Helper()
	for _, tok := range tokens {
		for _, k := range []string{keyOf(tok), launchKeyOf(tok)} {
			if n := rdb.Exists(context.Background(), k).Val(); n != 0 {
				t.Errorf("%s still exists after revocation", k)
			}
		}
	}
}

// launchID is the shape of the workspace service's launch ids.
const launchID = "Zm9v-YmFy_0123456789abcdefghijABCDEFGHIJklm"

// issueLaunch saves a new token of a session an LTI 1.3 launch opened.
func issueLaunch(t *testing.T, s *redisstore.Store, ws, email string, life time.Duration) domain.Token {
	t.Helper()
	now := time.Now().UTC().Truncate(time.Millisecond)
	token := domain.NewToken()
	err := s.Save(context.Background(), token.Digest(),
		domain.Session{Email: email, WorkspaceID: ws, IssuedAt: now, ExpiresAt: now.Add(life), LTILaunchID: launchID})
	if err != nil {
		t.Fatal(err)
	}
	return token
}

func roundTripAndTTL(t *testing.T, s *redisstore.Store, rdb redis.UniversalClient) {
	ws := workspace(t)
	now := time.Now().UTC().Truncate(time.Millisecond)
	want := domain.Session{Email: "Ada@example.com", WorkspaceID: ws, IssuedAt: now, ExpiresAt: now.Add(domain.TokenTTL)}
	token := domain.NewToken()
	if err := s.Save(context.Background(), token.Digest(), want); err != nil {
		t.Fatal(err)
	}
	got, err := s.Lookup(context.Background(), token.Digest())
	if err != nil {
		t.Fatal(err)
	}
	if got != want {
		t.Fatalf("Lookup = %+v, want %+v", got, want)
	}
	// Version 2: the token's life, not its expiry instant.
	wantValue := fmt.Sprintf("2 0 0 %d %d %s %s", now.UnixMilli(), domain.TokenTTL.Milliseconds(), ws, want.Email)
	if v := rdb.Get(context.Background(), keyOf(token)).Val(); v != wantValue {
		t.Fatalf("%s holds %q, want %q", keyOf(token), v, wantValue)
	}
	ttl, err := rdb.PTTL(context.Background(), keyOf(token)).Result()
	if err != nil {
		t.Fatal(err)
	}
	if d := domain.TokenTTL - ttl; d < 0 || d > time.Second {
		t.Fatalf("token TTL %s, want within a second of %s", ttl, domain.TokenTTL)
	}
}

// A launch's session is stored as every other session is, its value byte
// for byte what earlier versions write and read (value.go is theirs), so
// that a replica of an earlier version serves it during a rolling deploy.
// The launch id is in a key of its own, in the token's slot, expiring
// with it; LookupWithLaunch reads both, Lookup the token's only, and
// Revoke deletes both.
func launchIDBesideAnUnchangedValue(t *testing.T, s *redisstore.Store, rdb redis.UniversalClient) {
	ctx := context.Background()
	ws := workspace(t)
	now := time.Now().UTC().Truncate(time.Millisecond)
	want := domain.Session{Email: "Ada@example.com", WorkspaceID: ws, IssuedAt: now, ExpiresAt: now.Add(domain.TokenTTL), LTILaunchID: launchID}
	token := domain.NewToken()
	if err := s.Save(ctx, token.Digest(), want); err != nil {
		t.Fatal(err)
	}
	earlier := fmt.Sprintf("2 0 0 %d %d %s %s", now.UnixMilli(), domain.TokenTTL.Milliseconds(), ws, want.Email)
	if v := rdb.Get(ctx, keyOf(token)).Val(); v != earlier {
		t.Fatalf("%s holds %q, want %q, as earlier versions write it", keyOf(token), v, earlier)
	}
	if v := rdb.Get(ctx, launchKeyOf(token)).Val(); v != launchID {
		t.Fatalf("%s holds %q, want the launch id", launchKeyOf(token), v)
	}
	if got, err := s.LookupWithLaunch(ctx, token.Digest()); err != nil || got != want {
		t.Fatalf("LookupWithLaunch = %+v, %v; want %+v", got, err, want)
	}
	without := want
	without.LTILaunchID = ""
	if got, err := s.Lookup(ctx, token.Digest()); err != nil || got != without {
		t.Fatalf("Lookup = %+v, %v; want %+v", got, err, without)
	}

	tokenExpiry, launchExpiry := rdb.PExpireTime(ctx, keyOf(token)).Val(), rdb.PExpireTime(ctx, launchKeyOf(token)).Val()
	if tokenExpiry != time.Duration(want.ExpiresAt.UnixMilli())*time.Millisecond || launchExpiry != tokenExpiry {
		t.Fatalf("the token's key expires at %s, its launch key at %s; want both at %s", tokenExpiry, launchExpiry, want.ExpiresAt)
	}
	if c, ok := rdb.(*redis.ClusterClient); ok {
		if a, b := c.ClusterKeySlot(ctx, keyOf(token)).Val(), c.ClusterKeySlot(ctx, launchKeyOf(token)).Val(); a != b {
			t.Fatalf("the token's key is in slot %d, its launch key in %d", a, b)
		}
	}

	if err := s.Revoke(ctx, token.Digest()); err != nil {
		t.Fatal(err)
	}
	wantGone(t, rdb, token)
}

// Every key is of a known shape, and no key name or value holds a raw
// token or an email address in a key name.
func keysHaveTheirShapes(t *testing.T, s *redisstore.Store, rdb redis.UniversalClient) {
	ws := workspace(t)
	tokens := []domain.Token{
		issue(t, s, ws, "ada@example.com", domain.TokenTTL),
		issue(t, s, ws, "ada@example.com", domain.TokenTTL),
		issue(t, s, ws, "bob@example.com", domain.TokenTTL),
		issue(t, s, workspace(t), "bob@example.com", domain.TokenTTL),
		issueLaunch(t, s, ws, "carol@example.com", domain.TokenTTL),
	}
	if err := s.RevokeUser(context.Background(), ws, "bob@example.com"); err != nil {
		t.Fatal(err)
	}
	var (
		hex64      = `[0-9a-f]{64}`
		tokenKey   = regexp.MustCompile(`^t:[0-9A-Za-z_-]{22}$`) // 24 bytes
		counterKey = regexp.MustCompile(`^\{ws:[^{}]+\}:(u:` + hex64 + `:)?gen$`)
		launchKey  = regexp.MustCompile(`^\{t:[0-9A-Za-z_-]{22}\}:lti$`)
		launchID   = regexp.MustCompile(`^[0-9A-Za-z_-]{43}$`)
		// version, gen, ugen, issuedAt, life, workspace, email
		tokenValue = regexp.MustCompile(`^2 [0-9]+ [0-9]+ [0-9]{13} [0-9]+ [^ ]+ [^ ]+@[^ ]+$`)
	)
	ctx := context.Background()
	keys := allKeys(t, rdb)
	if len(keys) == 0 {
		t.Fatal("no keys")
	}
	for _, key := range keys {
		var values []string
		switch typ := rdb.Type(ctx, key).Val(); {
		case typ == "string" && tokenKey.MatchString(key):
			v := rdb.Get(ctx, key).Val()
			if !tokenValue.MatchString(v) {
				t.Errorf("token %s holds %q", key, v)
			}
			values = []string{v}
		case typ == "string" && launchKey.MatchString(key):
			v := rdb.Get(ctx, key).Val()
			if !launchID.MatchString(v) {
				t.Errorf("launch key %s holds %q", key, v)
			}
			values = []string{v}
		case typ == "string" && counterKey.MatchString(key):
			v := rdb.Get(ctx, key).Val()
			if _, err := strconv.ParseUint(v, 10, 64); err != nil {
				t.Errorf("counter %s holds %q", key, v)
			}
			values = []string{v}
		default:
			t.Errorf("unexpected key %s of type %s", key, typ)
		}
		for _, tok := range tokens {
			if strings.Contains(key, string(tok)) || slices.ContainsFunc(values, func(v string) bool { return strings.Contains(v, string(tok)) }) {
				t.Fatalf("key %s holds a raw token", key)
			}
		}
		if strings.Contains(key, "@") {
			t.Errorf("key %s holds an email address", key)
		}
	}
}

func revokeOne(t *testing.T, s *redisstore.Store, rdb redis.UniversalClient) {
	ws := workspace(t)
	a1, a2 := issue(t, s, ws, "ada@example.com", domain.TokenTTL), issue(t, s, ws, "ada@example.com", domain.TokenTTL)
	if err := s.Revoke(context.Background(), a1.Digest()); err != nil {
		t.Fatal(err)
	}
	wantNotFound(t, s, a1)
	wantLive(t, s, a2, "ada@example.com")
	wantGone(t, rdb, a1)
	if err := s.Revoke(context.Background(), domain.NewToken().Digest()); err != nil {
		t.Fatalf("revoking an unknown token: %v", err)
	}
}

func revokeUser(t *testing.T, s *redisstore.Store, rdb redis.UniversalClient) {
	ws, other := workspace(t), workspace(t)
	ada1, ada2 := issue(t, s, ws, "ada@example.com", domain.TokenTTL), issue(t, s, ws, "Ada@Example.com", domain.TokenTTL)
	bob := issue(t, s, ws, "bob@example.com", domain.TokenTTL)
	adaElsewhere := issue(t, s, other, "ada@example.com", domain.TokenTTL)
	if err := s.RevokeUser(context.Background(), ws, "ADA@example.com"); err != nil {
		t.Fatal(err)
	}
	wantNotFound(t, s, ada1)
	wantNotFound(t, s, ada2)
	wantLive(t, s, bob, "bob@example.com")
	wantLive(t, s, adaElsewhere, "ada@example.com")
	wantLive(t, s, issue(t, s, ws, "ada@example.com", domain.TokenTTL), "ada@example.com")
}

func revokeWorkspace(t *testing.T, s *redisstore.Store, rdb redis.UniversalClient) {
	ws, other := workspace(t), workspace(t)
	a, b := issue(t, s, ws, "ada@example.com", domain.TokenTTL), issue(t, s, ws, "bob@example.com", domain.TokenTTL)
	kept := issue(t, s, other, "ada@example.com", domain.TokenTTL)
	if err := s.RevokeWorkspace(context.Background(), ws); err != nil {
		t.Fatal(err)
	}
	wantNotFound(t, s, a)
	wantNotFound(t, s, b)
	wantLive(t, s, kept, "ada@example.com")
	wantLive(t, s, issue(t, s, ws, "ada@example.com", domain.TokenTTL), "ada@example.com")
	if err := s.RevokeWorkspace(context.Background(), workspace(t)); err != nil {
		t.Fatalf("revoking a workspace with no tokens: %v", err)
	}
}

// A token's key whose value this version did not write is not a token;
// Revoke deletes it all the same.
func damagedTokenIsNotFound(t *testing.T, s *redisstore.Store, rdb redis.UniversalClient) {
	ctx := context.Background()
	ws := workspace(t)
	issue(t, s, ws, "ada@example.com", domain.TokenTTL) // the counters exist, at 0
	iat := strconv.FormatInt(time.Now().UnixMilli(), 10)
	exp := strconv.FormatInt(time.Now().Add(time.Hour).UnixMilli(), 10)
	rest := " " + ws + " ada@example.com"
	for _, v := range []string{
		"",
		"1 0 0 " + exp,
		"2 0 0 " + iat + " 3600000 " + ws, // no email
		"1 0 0 x " + exp + rest,
		"2 0 0 " + iat + " 1h" + rest,
		"2 0 0 " + iat + " 9223372036854775807" + rest, // expiry out of range
		"3 0 0 " + iat + " " + exp + rest,
		"1 0  " + exp + " " + exp + rest,
		"2  0 " + iat + " 3600000" + rest,
	} {
		token := domain.NewToken()
		if err := rdb.Set(ctx, keyOf(token), v, time.Hour).Err(); err != nil {
			t.Fatal(err)
		}
		wantNotFound(t, s, token)
		if err := s.Revoke(ctx, token.Digest()); err != nil {
			t.Fatal(err)
		}
		wantGone(t, rdb, token)
	}
}

// Tokens of the earlier layouts (a version 1 string under t:<hex of the
// key's 16 bytes>, a hash under tok:<hex of the whole digest>) are not
// read, even with their counters in place: their holders log in again.
func earlierLayoutsAreNotRead(t *testing.T, s *redisstore.Store, rdb redis.UniversalClient) {
	ctx := context.Background()
	ws := workspace(t)
	issue(t, s, ws, "ada@example.com", domain.TokenTTL) // the counters exist, at 0
	now := time.Now().UTC()
	iat, exp := now.UnixMilli(), now.Add(time.Hour).UnixMilli()
	hexKeyed, hashed := domain.NewToken(), domain.NewToken()
	d := hexKeyed.Digest()
	if err := rdb.Set(ctx, "t:"+hex.EncodeToString(d[:16]), fmt.Sprintf("1 0 0 %d %d %s ada@example.com", iat, exp, ws), time.Hour).Err(); err != nil {
		t.Fatal(err)
	}
	d = hashed.Digest()
	err := rdb.HSet(ctx, "tok:"+hex.EncodeToString(d[:]), "email", "ada@example.com", "workspaceId", ws,
		"issuedAt", iat, "expiresAt", exp, "gen", "0", "ugen", "0").Err()
	if err != nil {
		t.Fatal(err)
	}
	wantNotFound(t, s, hexKeyed)
	wantNotFound(t, s, hashed)
}

// A generation counter that is gone (evicted, say) vouches for no token.
func missingCounterRefusesToken(t *testing.T, s *redisstore.Store, rdb redis.UniversalClient) {
	ws := workspace(t)
	token := issue(t, s, ws, "ada@example.com", domain.TokenTTL)
	wantLive(t, s, token, "ada@example.com")
	if err := rdb.Del(context.Background(), "{ws:"+ws+"}:gen").Err(); err != nil {
		t.Fatal(err)
	}
	wantNotFound(t, s, token)
}

// Counters outlive every token issued under them, by at most the margin
// and the expiry step; a token that expires sooner than one issued before
// it never shortens their life.
func countersOutliveTokens(t *testing.T, s *redisstore.Store, rdb redis.UniversalClient) {
	ctx := context.Background()
	ws := workspace(t)
	long := issue(t, s, ws, "ada@example.com", domain.TokenTTL)
	longTTL := rdb.PTTL(ctx, keyOf(long)).Val()
	short := issue(t, s, ws, "ada@example.com", time.Hour)
	if ttl := rdb.PTTL(ctx, keyOf(short)).Val(); ttl <= 0 || ttl > time.Hour {
		t.Fatalf("short token TTL %s, want at most an hour", ttl)
	}
	keys := workspaceKeys(t, rdb, ws)
	if len(keys) != 2 {
		t.Fatalf("workspace keys %v, want two counters", keys)
	}
	for _, k := range keys {
		ttl := rdb.PTTL(ctx, k).Val()
		if ttl < longTTL || ttl > longTTL+time.Second+time.Minute+time.Second {
			t.Errorf("%s has TTL %s, want at least the longest token's %s, by at most a second and a minute", k, ttl, longTTL)
		}
	}
	// A revocation's new counter lives as long as a token issued then.
	other := workspace(t)
	if err := s.RevokeUser(ctx, other, "bob@example.com"); err != nil {
		t.Fatal(err)
	}
	keys = workspaceKeys(t, rdb, other)
	if len(keys) != 1 {
		t.Fatalf("keys after revoking a user without tokens: %v, want one counter", keys)
	}
	if ttl := rdb.PTTL(ctx, keys[0]).Val(); ttl < domain.TokenTTL || ttl > domain.TokenTTL+time.Second+time.Minute+time.Second {
		t.Errorf("%s has TTL %s, want a token's life and at most a second and a minute more", keys[0], ttl)
	}
}

// workspaceKeys lists the keys that carry the workspace's hash tag.
func workspaceKeys(t *testing.T, rdb redis.UniversalClient, ws string) []string {
	t.Helper()
	var out []string
	for _, k := range allKeys(t, rdb) {
		if strings.Contains(k, "{ws:"+ws+"}") {
			out = append(out, k)
		}
	}
	return out
}

// Counters live at least as long as the token, then expire; so does a
// launch's session's launch key.
// The store rounds their expiry up to a tenth of a second here, not a
// minute, and the test waits for Redis to expire them.
func everythingExpires(t *testing.T, _ *redisstore.Store, rdb redis.UniversalClient) {
	const life = time.Second
	s := redisstore.New(rdb, redisstore.WithExpiryStep(100*time.Millisecond))
	ws := workspace(t)
	token := issueLaunch(t, s, ws, "ada@example.com", life)
	ctx := context.Background()
	keys := workspaceKeys(t, rdb, ws)
	if len(keys) != 2 {
		t.Fatalf("workspace keys %v, want two counters", keys)
	}
	tokenTTL := rdb.PTTL(ctx, keyOf(token)).Val()
	if tokenTTL <= 0 || tokenTTL > life {
		t.Fatalf("token TTL %s, want at most %s", tokenTTL, life)
	}
	for _, k := range keys {
		if ttl := rdb.PTTL(ctx, k).Val(); ttl < tokenTTL || ttl > life+5*time.Second {
			t.Fatalf("%s has TTL %s, want at least the token's %s and not much more", k, ttl, tokenTTL)
		}
	}
	testenv.Eventually(t, 30*time.Second, func() error {
		if left := workspaceKeys(t, rdb, ws); len(left) != 0 {
			return fmt.Errorf("keys left: %v", left)
		}
		if n := rdb.Exists(ctx, keyOf(token), launchKeyOf(token)).Val(); n != 0 {
			return fmt.Errorf("%d of %s and %s are left", n, keyOf(token), launchKeyOf(token))
		}
		return nil
	}, "Redis expires the token, its launch key and its counters")
	wantNotFound(t, s, token)
}

// With Redis stopped, calls fail as Unavailable, from the refused
// connection rather than their deadline; after a restart the same client
// works again.
func TestRedisDownIsUnavailable(t *testing.T) {
	srv, rdb := startStandalone(t)
	s := redisstore.New(rdb)
	token := issue(t, s, "w", "ada@example.com", domain.TokenTTL)
	if err := srv.Stop(); err != nil {
		t.Fatal(err)
	}
	session := func() domain.Session {
		now := time.Now()
		return domain.Session{Email: "bob@example.com", WorkspaceID: "w", IssuedAt: now, ExpiresAt: now.Add(domain.TokenTTL)}
	}
	calls := map[string]func(context.Context) error{
		"Save":   func(ctx context.Context) error { return s.Save(ctx, domain.NewToken().Digest(), session()) },
		"Lookup": func(ctx context.Context) error { _, err := s.Lookup(ctx, token.Digest()); return err },
		"Ping":   s.Ping,
	}
	for name, call := range calls {
		// The deadline is far beyond what a refused connection takes, so
		// the answer comes from Redis being down, not from the time running
		// out.
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		err := call(ctx)
		cancel()
		if fault.KindOf(err) != fault.Unavailable || errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("%s with Redis down: %v, want Unavailable before the deadline", name, err)
		}
	}

	if err := srv.Restart(context.Background()); err != nil {
		t.Fatal(err)
	}
	fresh := domain.NewToken()
	testenv.Eventually(t, 10*time.Second, func() error {
		return s.Save(context.Background(), fresh.Digest(), session())
	}, "Save after Redis restarted")
	wantLive(t, s, fresh, "bob@example.com")
	wantNotFound(t, s, token) // persistence is off: the restart forgot it
}

// A Redis that refuses writes (full under noeviction: "OOM command not
// allowed") is an outage of the token store to logins and revocations:
// Unavailable, never Internal. Tokens already issued still check, the
// limits count on this replica meanwhile, and once Redis has room logins
// work again.
func TestFullRedisIsUnavailable(t *testing.T) {
	srv, rdb := startStandalone(t)
	s := redisstore.New(rdb)
	guard := ratelimit.NewGuard(rdb, ratelimit.Settings{
		Default:  ratelimit.Limit{Rate: 100, Burst: 200},
		Failures: ratelimit.FailureLimits{PerKey: 10, PerAddress: 100, Window: time.Minute},
	}, slog.New(slog.DiscardHandler))
	logins := s.WithLoginLimits(guard)
	ws := workspace(t)
	token := issue(t, s, ws, "ada@example.com", domain.TokenTTL)
	ctx := clientaddr.NewContext(context.Background(), netip.MustParseAddr("10.9.0.1"))
	session := func() domain.Session {
		now := time.Now().UTC().Truncate(time.Millisecond)
		return domain.Session{Email: "bob@example.com", WorkspaceID: ws, IssuedAt: now, ExpiresAt: now.Add(domain.TokenTTL)}
	}
	saveLogin := func() error {
		return logins.SaveLogin(ctx, domain.NewToken().Digest(), session(), app.LoginLimits{AppKey: "key-full"})
	}
	if err := testenv.SetRedisFull(ctx, srv.Addr(), true); err != nil {
		t.Fatal(err)
	}

	for name, call := range map[string]func() error{
		"SaveLogin":       saveLogin,
		"Save":            func() error { return s.Save(ctx, domain.NewToken().Digest(), session()) },
		"RevokeUser":      func() error { return s.RevokeUser(ctx, ws, "ada@example.com") },
		"RevokeWorkspace": func() error { return s.RevokeWorkspace(ctx, ws) },
	} {
		err := call()
		if e, ok := fault.As(err); !ok || e.Kind != fault.Unavailable || !strings.Contains(err.Error(), "OOM") {
			t.Errorf("%s on a full Redis: %v, want Unavailable caused by OOM", name, err)
		}
	}
	wantLive(t, s, token, "ada@example.com")

	if err := testenv.SetRedisFull(ctx, srv.Addr(), false); err != nil {
		t.Fatal(err)
	}
	if err := saveLogin(); err != nil {
		t.Fatalf("SaveLogin once Redis has room: %v", err)
	}
}

// SaveLogin runs a login's limits (the failure counters of the client's
// address first, then the key pair's rate) and saves the token only when
// they let it pass: in one script on a single server, one call after
// another on a Cluster, with the same outcomes.
func saveLogin(t *testing.T, s *redisstore.Store, rdb redis.UniversalClient) {
	guard := ratelimit.NewGuard(rdb, ratelimit.Settings{
		Default:  ratelimit.Limit{Rate: 1, Burst: 2},
		Failures: ratelimit.FailureLimits{PerKey: 2, PerAddress: 5, Window: time.Minute},
	}, slog.New(slog.DiscardHandler))
	n := sequence.Add(1)
	appKey := fmt.Sprintf("key-%d", n)
	from := func(host int) context.Context {
		return clientaddr.NewContext(context.Background(), netip.AddrFrom4([4]byte{10, byte(n >> 8), byte(n), byte(host)}))
	}
	ws := workspace(t)
	logins := s.WithLoginLimits(guard)
	save := func(ctx context.Context, own ratelimit.Limit) (domain.Token, error) {
		now := time.Now().UTC().Truncate(time.Millisecond)
		token := domain.NewToken()
		err := logins.SaveLogin(ctx, token.Digest(),
			domain.Session{Email: "ada@example.com", WorkspaceID: ws, IssuedAt: now, ExpiresAt: now.Add(domain.TokenTTL)},
			app.LoginLimits{AppKey: appKey, Own: own})
		return token, err
	}
	wantRefused := func(token domain.Token, err error, why string) {
		t.Helper()
		if fault.KindOf(err) != fault.Throttled || !strings.Contains(err.Error(), why) {
			t.Fatalf("SaveLogin: %v, want a refusal for %q", err, why)
		}
		wantNotFound(t, s, token)
	}

	// The rate: a burst of two, then a refusal that saves nothing.
	for range 2 {
		token, err := save(from(1), ratelimit.Limit{})
		if err != nil {
			t.Fatal(err)
		}
		wantLive(t, s, token, "ada@example.com")
	}
	token, err := save(from(1), ratelimit.Limit{})
	wantRefused(token, err, "rate limit exceeded")
	// A workspace's own limit is a bucket of its own.
	if _, err := save(from(1), ratelimit.Limit{Rate: 10, Burst: 20}); err != nil {
		t.Fatalf("with the workspace's own limit: %v", err)
	}

	// Failures: two with this app key from host 2 block it there, before
	// the rate is even counted; host 3 is not blocked.
	guard.Failed(from(2), appKey)
	guard.Failed(from(2), appKey)
	token, err = save(from(2), ratelimit.Limit{Rate: 10, Burst: 20})
	wantRefused(token, err, "failed authentications")
	if _, err := save(from(3), ratelimit.Limit{Rate: 10, Burst: 20}); err != nil {
		t.Fatalf("from another address: %v", err)
	}

	// A launch's session keeps its launch id, as with Save.
	now := time.Now().UTC().Truncate(time.Millisecond)
	launched := domain.Session{Email: "ada@example.com", WorkspaceID: ws, IssuedAt: now, ExpiresAt: now.Add(domain.TokenTTL), LTILaunchID: launchID}
	token = domain.NewToken()
	if err := logins.SaveLogin(from(4), token.Digest(), launched, app.LoginLimits{AppKey: appKey, Own: ratelimit.Limit{Rate: 10, Burst: 20}}); err != nil {
		t.Fatal(err)
	}
	if got, err := s.LookupWithLaunch(context.Background(), token.Digest()); err != nil || got != launched {
		t.Fatalf("LookupWithLaunch = %+v, %v; want %+v", got, err, launched)
	}
}

// commandLog is a redis.Hook that records the commands a client sends, a
// pipeline as one entry, but not those that set up a new connection.
type commandLog struct {
	mu   sync.Mutex
	sent []string
}

// setup are the commands go-redis sends on a connection it has just made.
var setup = map[string]bool{"hello": true, "auth": true, "select": true, "client": true, "readonly": true}

func (l *commandLog) DialHook(next redis.DialHook) redis.DialHook { return next }

func (l *commandLog) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		if !setup[cmd.Name()] {
			l.record(cmd.Name())
		}
		return next(ctx, cmd)
	}
}

func (l *commandLog) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		var names []string
		for _, c := range cmds {
			if !setup[c.Name()] {
				names = append(names, c.Name())
			}
		}
		if len(names) > 0 {
			l.record("[" + strings.Join(names, " ") + "]")
		}
		return next(ctx, cmds)
	}
}

func (l *commandLog) record(name string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.sent = append(l.sent, name)
}

// take returns the commands recorded since the last call.
func (l *commandLog) take() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := strings.Join(l.sent, ", ")
	l.sent = nil
	return out
}

// logged returns a client of its own on rdb's servers, whose commands the
// log records.
func logged(t *testing.T, rdb redis.UniversalClient) (redis.UniversalClient, *commandLog) {
	t.Helper()
	var addrs []string
	switch c := rdb.(type) {
	case *redis.ClusterClient:
		addrs = c.Options().Addrs
	case *redis.Client:
		addrs = []string{c.Options().Addr}
	default:
		t.Fatalf("cannot copy a %T", rdb)
	}
	c := redis.NewUniversalClient(clientOptions(addrs...))
	t.Cleanup(func() { _ = c.Close() })
	log := &commandLog{}
	c.AddHook(log)
	return c, log
}

// A token costs Lookup one GET and the MGET of its generations; a token
// that is not there, one GET. LookupWithLaunch reads the launch key in
// the token's read, an MGET in place of the GET. Revoke is one DEL.
func commandsOfLookupAndRevoke(t *testing.T, s *redisstore.Store, rdb redis.UniversalClient) {
	ctx := context.Background()
	c, log := logged(t, rdb)
	logging := redisstore.New(c)
	ws := workspace(t)
	token, unknown := issue(t, logging, ws, "ada@example.com", domain.TokenTTL), domain.NewToken()
	log.take()
	wantLive(t, logging, token, "ada@example.com")
	if got := log.take(); got != "get, mget" {
		t.Errorf("Lookup of a token sent %s, want get, mget", got)
	}
	wantNotFound(t, logging, unknown)
	if got := log.take(); got != "get" {
		t.Errorf("Lookup of an unknown token sent %s, want get", got)
	}
	if _, err := logging.LookupWithLaunch(ctx, token.Digest()); err != nil {
		t.Fatal(err)
	}
	if got := log.take(); got != "mget, mget" {
		t.Errorf("LookupWithLaunch of a token sent %s, want mget, mget", got)
	}
	if err := logging.Revoke(ctx, unknown.Digest()); err != nil {
		t.Fatal(err)
	}
	if got := log.take(); got != "del" {
		t.Errorf("Revoke sent %s, want del", got)
	}
}
