package redisstore_test

import (
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/liveproctor/workspaces/deploy/local/redisproc"
	"github.com/liveproctor/workspaces/pkg/fault"
	"github.com/liveproctor/workspaces/services/auth/internal/adapters/redisstore"
	"github.com/liveproctor/workspaces/services/auth/internal/domain"
)

// clientOptions keep a Redis that is down from holding a test up.
func clientOptions(addrs ...string) *redis.UniversalOptions {
	return &redis.UniversalOptions{
		Addrs:       addrs,
		DialTimeout: 500 * time.Millisecond, ReadTimeout: 500 * time.Millisecond, WriteTimeout: 500 * time.Millisecond,
		PoolTimeout: 500 * time.Millisecond, MaxRetries: 1,
	}
}

func startStandalone(t *testing.T) (*redisproc.Server, redis.UniversalClient) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	srv, err := redisproc.Start(ctx, redisproc.Options{Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = srv.Stop() })
	rdb := redis.NewUniversalClient(clientOptions(srv.Addr()))
	t.Cleanup(func() { _ = rdb.Close() })
	return srv, rdb
}

// startCluster runs a 3-master Redis Cluster on loopback for the test.
func startCluster(t *testing.T) redis.UniversalClient {
	t.Helper()
	bin, err := redisproc.LookPath()
	if err != nil {
		t.Fatal(err)
	}
	var addrs []string
	for i := range 3 {
		port := freePort(t)
		dir := filepath.Join(t.TempDir(), strconv.Itoa(i))
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		cmd := exec.Command(bin, "--port", strconv.Itoa(port), "--bind", "127.0.0.1", "--cluster-enabled", "yes",
			"--cluster-config-file", "nodes.conf", "--save", "", "--appendonly", "no", "--dir", dir)
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
		addr := fmt.Sprintf("127.0.0.1:%d", port)
		waitPing(t, addr)
		addrs = append(addrs, addr)
	}
	create := exec.Command(filepath.Join(filepath.Dir(bin), "redis-cli"),
		append(append([]string{"--cluster", "create"}, addrs...), "--cluster-replicas", "0", "--cluster-yes")...)
	if out, err := create.CombinedOutput(); err != nil {
		t.Fatalf("redis-cli --cluster create: %v\n%s", err, out)
	}
	rdb := redis.NewUniversalClient(clientOptions(addrs...))
	t.Cleanup(func() { _ = rdb.Close() })
	if _, ok := rdb.(*redis.ClusterClient); !ok {
		t.Fatalf("three addresses gave a %T, want a cluster client", rdb)
	}
	// Every node must agree the cluster is up, and a write must reach
	// every master, before the tests may rely on it.
	deadline := time.Now().Add(30 * time.Second)
	ready := func() error {
		for _, addr := range addrs {
			node := redis.NewClient(&redis.Options{Addr: addr})
			info, err := node.ClusterInfo(context.Background()).Result()
			node.Close()
			if err != nil || !strings.Contains(info, "cluster_state:ok") {
				return fmt.Errorf("%s: %v %s", addr, err, info)
			}
		}
		for i := range 64 {
			if err := rdb.Set(context.Background(), fmt.Sprintf("probe:%d", i), "1", time.Second).Err(); err != nil {
				return err
			}
		}
		return nil
	}
	for err := ready(); err != nil; err = ready() {
		if time.Now().After(deadline) {
			t.Fatalf("the cluster never became ready: %v", err)
		}
		time.Sleep(100 * time.Millisecond)
	}
	return rdb
}

func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

func waitPing(t *testing.T, addr string) {
	t.Helper()
	c := redis.NewClient(&redis.Options{Addr: addr, DialTimeout: 200 * time.Millisecond})
	defer c.Close()
	deadline := time.Now().Add(10 * time.Second)
	for c.Ping(context.Background()).Err() != nil {
		if time.Now().After(deadline) {
			t.Fatalf("redis-server at %s never answered", addr)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func TestStoreOnStandaloneRedis(t *testing.T) {
	_, rdb := startStandalone(t)
	runContract(t, rdb)
}

func TestStoreOnRedisCluster(t *testing.T) {
	runContract(t, startCluster(t))
}

// runContract is what every Redis deployment must do.
func runContract(t *testing.T, rdb redis.UniversalClient) {
	cases := []struct {
		name string
		run  func(*testing.T, *redisstore.Store, redis.UniversalClient)
	}{
		{"RoundTripAndTTL", roundTripAndTTL},
		{"OnlyDigestsAreStored", onlyDigestsAreStored},
		{"RevokeOne", revokeOne},
		{"RevokeUser", revokeUser},
		{"RevokeWorkspace", revokeWorkspace},
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

var sequence int

// issue saves a fresh 8-hour token for email in a workspace unique to the
// test unless ws is given.
func issue(t *testing.T, s *redisstore.Store, ws, email string, life time.Duration) domain.Token {
	t.Helper()
	now := time.Now().UTC().Truncate(time.Millisecond)
	token := domain.NewToken()
	err := s.Save(context.Background(), token.Digest(), domain.Session{Email: email, WorkspaceID: ws, IssuedAt: now, ExpiresAt: now.Add(life)})
	if err != nil {
		t.Fatal(err)
	}
	return token
}

func workspace(t *testing.T) string {
	sequence++
	return fmt.Sprintf("%s-%d", strings.ReplaceAll(t.Name(), "/", "-"), sequence)
}

func wantLive(t *testing.T, s *redisstore.Store, token domain.Token, email string) {
	t.Helper()
	got, err := s.Lookup(context.Background(), token.Digest())
	if err != nil || got.Email != email {
		t.Fatalf("Lookup = %+v, %v; want %s's session", got, err, email)
	}
}

func wantRevoked(t *testing.T, s *redisstore.Store, token domain.Token) {
	t.Helper()
	if _, err := s.Lookup(context.Background(), token.Digest()); !errors.Is(err, domain.ErrTokenNotFound) {
		t.Fatalf("Lookup of a revoked token: error %v, want ErrTokenNotFound", err)
	}
}

func roundTripAndTTL(t *testing.T, s *redisstore.Store, rdb redis.UniversalClient) {
	ws := workspace(t)
	before := time.Now()
	token := issue(t, s, ws, "ada@example.com", domain.TokenTTL)
	got, err := s.Lookup(context.Background(), token.Digest())
	if err != nil {
		t.Fatal(err)
	}
	if got.Email != "ada@example.com" || got.WorkspaceID != ws || got.ExpiresAt.Sub(got.IssuedAt) != domain.TokenTTL {
		t.Fatalf("session %+v", got)
	}
	d := token.Digest()
	ttl, err := rdb.PTTL(context.Background(), "tok:"+hex.EncodeToString(d[:])).Result()
	if err != nil {
		t.Fatal(err)
	}
	if want := domain.TokenTTL - time.Since(before); ttl < want-2*time.Second || ttl > domain.TokenTTL {
		t.Fatalf("token TTL %s, want about %s (28,800 s)", ttl, want)
	}
	wantRevoked(t, s, domain.NewToken())
}

// allKeys scans every key, on every master of a Cluster.
func allKeys(t *testing.T, rdb redis.UniversalClient) []string {
	t.Helper()
	var mu sync.Mutex
	var out []string
	scan := func(ctx context.Context, c *redis.Client) error {
		iter := c.Scan(ctx, 0, "*", 1000).Iterator()
		for iter.Next(ctx) {
			mu.Lock()
			out = append(out, iter.Val())
			mu.Unlock()
		}
		return iter.Err()
	}
	var err error
	switch c := rdb.(type) {
	case *redis.ClusterClient:
		err = c.ForEachMaster(context.Background(), scan) // concurrently
	case *redis.Client:
		err = scan(context.Background(), c)
	}
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func onlyDigestsAreStored(t *testing.T, s *redisstore.Store, rdb redis.UniversalClient) {
	ws := workspace(t)
	tokens := []domain.Token{issue(t, s, ws, "ada@example.com", domain.TokenTTL), issue(t, s, ws, "bob@example.com", domain.TokenTTL)}
	ctx := context.Background()
	for _, key := range allKeys(t, rdb) {
		var values []string
		switch typ := rdb.Type(ctx, key).Val(); typ {
		case "hash":
			if !strings.HasPrefix(key, "tok:") {
				t.Errorf("unexpected hash %s", key)
			}
			for k, v := range rdb.HGetAll(ctx, key).Val() {
				values = append(values, k, v)
			}
		case "set":
			values = rdb.SMembers(ctx, key).Val()
		case "string":
			values = []string{rdb.Get(ctx, key).Val()}
		default:
			t.Errorf("key %s of type %s", key, typ)
		}
		for _, tok := range tokens {
			if strings.Contains(key, string(tok)) || strings.Contains(strings.Join(values, " "), string(tok)) {
				t.Fatalf("key %s holds a raw token", key)
			}
		}
		if strings.Contains(key, "@") {
			t.Errorf("key %s holds an email address", key)
		}
	}
}

func revokeOne(t *testing.T, s *redisstore.Store, _ redis.UniversalClient) {
	ws := workspace(t)
	a1, a2 := issue(t, s, ws, "ada@example.com", domain.TokenTTL), issue(t, s, ws, "ada@example.com", domain.TokenTTL)
	if err := s.Revoke(context.Background(), a1.Digest()); err != nil {
		t.Fatal(err)
	}
	wantRevoked(t, s, a1)
	wantLive(t, s, a2, "ada@example.com")
	if err := s.Revoke(context.Background(), domain.NewToken().Digest()); err != nil {
		t.Fatalf("revoking an unknown token: %v", err)
	}
}

func revokeUser(t *testing.T, s *redisstore.Store, _ redis.UniversalClient) {
	ws, other := workspace(t), workspace(t)
	ada1, ada2 := issue(t, s, ws, "ada@example.com", domain.TokenTTL), issue(t, s, ws, "Ada@Example.com", domain.TokenTTL)
	bob := issue(t, s, ws, "bob@example.com", domain.TokenTTL)
	adaElsewhere := issue(t, s, other, "ada@example.com", domain.TokenTTL)
	if err := s.RevokeUser(context.Background(), ws, "ADA@example.com"); err != nil {
		t.Fatal(err)
	}
	wantRevoked(t, s, ada1)
	wantRevoked(t, s, ada2)
	wantLive(t, s, bob, "bob@example.com")
	wantLive(t, s, adaElsewhere, "ada@example.com")
	wantLive(t, s, issue(t, s, ws, "ada@example.com", domain.TokenTTL), "ada@example.com")
}

func revokeWorkspace(t *testing.T, s *redisstore.Store, _ redis.UniversalClient) {
	ws, other := workspace(t), workspace(t)
	a, b := issue(t, s, ws, "ada@example.com", domain.TokenTTL), issue(t, s, ws, "bob@example.com", domain.TokenTTL)
	kept := issue(t, s, other, "ada@example.com", domain.TokenTTL)
	if err := s.RevokeWorkspace(context.Background(), ws); err != nil {
		t.Fatal(err)
	}
	wantRevoked(t, s, a)
	wantRevoked(t, s, b)
	wantLive(t, s, kept, "ada@example.com")
	wantLive(t, s, issue(t, s, ws, "ada@example.com", domain.TokenTTL), "ada@example.com")
}

// Indexes and counters expire: none of a workspace's keys outlives its last
// token by more than the store's one-minute margin.
func everythingExpires(t *testing.T, s *redisstore.Store, rdb redis.UniversalClient) {
	ws := workspace(t)
	issue(t, s, ws, "ada@example.com", 2*time.Second)
	ctx := context.Background()
	ofWorkspace := func() []string {
		var out []string
		for _, k := range allKeys(t, rdb) {
			if strings.Contains(k, "{ws:"+ws+"}") {
				out = append(out, k)
			}
		}
		return out
	}
	keys := ofWorkspace()
	if len(keys) != 4 {
		t.Fatalf("workspace keys %v, want two indexes and two counters", keys)
	}
	for _, k := range keys {
		ttl := rdb.PTTL(ctx, k).Val()
		if ttl <= 0 || ttl > 2*time.Second+time.Minute {
			t.Fatalf("%s has TTL %s, want at most the token's life plus a minute", k, ttl)
		}
	}
}

// With Redis stopped, calls fail as Unavailable within their deadline;
// after a restart the same client works again.
func TestRedisDownIsUnavailable(t *testing.T) {
	srv, rdb := startStandalone(t)
	s := redisstore.New(rdb)
	token := issue(t, s, "w", "ada@example.com", domain.TokenTTL)
	if err := srv.Stop(); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	if _, err := s.Lookup(ctx, token.Digest()); fault.KindOf(err) != fault.Unavailable {
		t.Fatalf("Lookup with Redis down: %v, want Unavailable", err)
	}
	if err := s.Save(ctx, domain.NewToken().Digest(), domain.Session{Email: "a@b.c", WorkspaceID: "w", IssuedAt: time.Now(), ExpiresAt: time.Now().Add(time.Hour)}); fault.KindOf(err) != fault.Unavailable {
		t.Fatalf("Save with Redis down: %v, want Unavailable", err)
	}
	if err := srv.Restart(context.Background()); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		err := s.Save(context.Background(), domain.NewToken().Digest(), domain.Session{Email: "a@b.c", WorkspaceID: "w", IssuedAt: time.Now(), ExpiresAt: time.Now().Add(time.Hour)})
		if err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("Save after restart: %v", err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}
