package ltistate_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/liveproctor/workspaces/services/workspace/internal/lti/adapters/ltistate"
	ltiapp "github.com/liveproctor/workspaces/services/workspace/internal/lti/app"
)

// tokenStoreContract is what every ltiapp.PlatformTokenStore does: one
// holder of a key's lock at a time, released by its owner only (Put or
// Unlock); a token read back as stored, until its UseUntil; Drop removing
// only the token named.
func tokenStoreContract(t *testing.T, s ltiapp.PlatformTokenStore) {
	ctx := context.Background()
	lock := func(key, owner string) bool {
		t.Helper()
		ok, err := s.Lock(ctx, key, owner, time.Minute)
		if err != nil {
			t.Fatal(err)
		}
		return ok
	}
	if !lock("k1", "a") || lock("k1", "b") || !lock("k2", "b") {
		t.Fatal("a key's lock is not held by one owner at a time, or keys share it")
	}
	if err := s.Unlock(ctx, "k1", "b"); err != nil || lock("k1", "c") {
		t.Fatalf("another owner's Unlock released the lock (%v)", err)
	}
	now := time.Now().Truncate(time.Millisecond)
	tok := ltiapp.PlatformToken{AccessToken: "token-1", Scopes: []string{"s1", "s2"},
		UseUntil: now.Add(time.Hour), RenewAt: now.Add(40 * time.Minute)}
	if err := s.Put(ctx, "k1", "b", tok); err != nil || lock("k1", "c") {
		t.Fatalf("Put by another owner released the lock (%v)", err)
	}
	got, ok, err := s.Get(ctx, "k1")
	if err != nil || !ok || got.AccessToken != tok.AccessToken || !slices.Equal(got.Scopes, tok.Scopes) ||
		!got.UseUntil.Equal(tok.UseUntil) || !got.RenewAt.Equal(tok.RenewAt) {
		t.Fatalf("Get = %+v, %v, %v; want %+v", got, ok, err, tok)
	}
	if err := s.Put(ctx, "k1", "a", tok); err != nil || !lock("k1", "c") {
		t.Fatalf("Put by the lock's owner did not release it (%v)", err)
	}
	if _, ok, err := s.Get(ctx, "k2"); ok || err != nil {
		t.Fatalf("Get of a key with no token = %v, %v", ok, err)
	}
	if err := s.Drop(ctx, "k1", "token-0"); err != nil {
		t.Fatal(err)
	}
	if _, ok, _ := s.Get(ctx, "k1"); !ok {
		t.Fatal("Drop of another token removed the one held")
	}
	if err := s.Drop(ctx, "k1", "token-1"); err != nil {
		t.Fatal(err)
	}
	if _, ok, _ := s.Get(ctx, "k1"); ok {
		t.Fatal("Drop of the token held left it")
	}
	gone := tok
	gone.UseUntil = now.Add(-time.Second)
	if err := s.Put(ctx, "k3", "x", gone); err != nil {
		t.Fatal(err)
	}
	if _, ok, _ := s.Get(ctx, "k3"); ok {
		t.Fatal("a token past its UseUntil was served")
	}
}

func TestRedisPlatformTokens(t *testing.T) {
	_, rdb := startRedis(t)
	tokenStoreContract(t, ltistate.NewRedisPlatformTokens(rdb))
}

func TestMemoryPlatformTokens(t *testing.T) {
	tokenStoreContract(t, ltistate.NewMemoryPlatformTokens(10, nil))
}

func TestMemoryPlatformTokensBounded(t *testing.T) {
	s := ltistate.NewMemoryPlatformTokens(2, nil)
	ctx := context.Background()
	for _, k := range []string{"a", "b", "c"} {
		tok := ltiapp.PlatformToken{AccessToken: k, UseUntil: time.Now().Add(time.Hour)}
		if err := s.Put(ctx, k, "", tok); err != nil {
			t.Fatal(err)
		}
	}
	held := 0
	for _, k := range []string{"a", "b", "c"} {
		if _, ok, _ := s.Get(ctx, k); ok {
			held++
		}
	}
	if _, ok, _ := s.Get(ctx, "c"); !ok || held != 2 {
		t.Fatalf("%d tokens held (the last stored: %v), want 2 with the last", held, ok)
	}
}
