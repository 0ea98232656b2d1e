package app_test

import (
	"bytes"
	"context"
	"encoding/json"
	"sync"
	"testing"
	"time"

	"github.com/liveproctor/workspaces/pkg/jose"
	"github.com/liveproctor/workspaces/services/workspace/internal/adapters/memstore"
	"github.com/liveproctor/workspaces/services/workspace/internal/adapters/secretbox"
	ltiapp "github.com/liveproctor/workspaces/services/workspace/internal/lti/app"
	ltidomain "github.com/liveproctor/workspaces/services/workspace/internal/lti/domain"
)

// verifies reports whether token verifies with a key of the published set.
func verifies(t *testing.T, keys *ltiapp.ToolKeys, token string) (kid string) {
	t.Helper()
	jwks, err := keys.JWKS(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	set, err := jose.ParseKeySet(jwks)
	if err != nil {
		t.Fatal(err)
	}
	h, err := jose.ParseHeader(token)
	if err != nil {
		t.Fatal(err)
	}
	key, ok := set.Key(h.KID)
	if !ok {
		t.Fatalf("the token's kid %s is not published", h.KID)
	}
	if _, err := jose.Verify(token, key); err != nil {
		t.Fatal(err)
	}
	return h.KID
}

// Two replicas share the store: the first start makes one key, tokens
// verify with the published set, the successor is published ahead and
// signs when due, and the replaced key stays published for the overlap.
func TestToolKeysSignPublishAndRotate(t *testing.T) {
	box, err := secretbox.New(bytes.Repeat([]byte{1}, 32), bytes.Repeat([]byte{2}, 32))
	if err != nil {
		t.Fatal(err)
	}
	store := &memstore.ToolKeys{}
	c := &clock{now: time.Date(2026, 11, 26, 8, 0, 0, 0, time.UTC)}
	r := ltidomain.ToolKeyRotation{Every: 10 * 24 * time.Hour, Lead: 2 * 24 * time.Hour, Overlap: 3 * 24 * time.Hour}
	a, b := ltiapp.NewToolKeys(store, box, r, c.Now), ltiapp.NewToolKeys(store, box, r, c.Now)
	ctx := context.Background()
	var wg sync.WaitGroup
	for _, k := range []*ltiapp.ToolKeys{a, b} {
		wg.Go(func() {
			if err := k.Rotate(ctx); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	if s, _ := store.ToolKeys(ctx); len(s.Keys) != 1 {
		t.Fatalf("two replicas' first start made %d keys, want 1", len(s.Keys))
	}
	claims := map[string]any{"iss": "tool", "aud": "platform"}
	token, err := b.Sign(ctx, claims)
	if err != nil {
		t.Fatal(err)
	}
	first := verifies(t, a, token)

	c.Add(8*24*time.Hour + time.Minute) // within the lead of the successor
	if err := a.Rotate(ctx); err != nil {
		t.Fatal(err)
	}
	c.Add(time.Minute) // past b's reread
	token, _ = b.Sign(ctx, claims)
	if kid := verifies(t, b, token); kid != first {
		t.Fatalf("during the lead %s signed, want the first key %s", kid, first)
	}
	if s, _ := store.ToolKeys(ctx); len(s.Keys) != 2 {
		t.Fatalf("during the lead %d keys are stored, want 2", len(s.Keys))
	}

	c.Add(2 * 24 * time.Hour) // the successor's time
	if err := b.Rotate(ctx); err != nil {
		t.Fatal(err)
	}
	token, _ = b.Sign(ctx, claims)
	second := verifies(t, a, token)
	if second == first {
		t.Fatal("the successor does not sign when due")
	}
	c.Add(3*24*time.Hour + time.Minute) // past the overlap
	if err := a.Rotate(ctx); err != nil {
		t.Fatal(err)
	}
	jwks, _ := a.JWKS(ctx)
	if set, _ := jose.ParseKeySet(jwks); func() bool { _, ok := set.Key(first); return ok }() {
		t.Fatal("the replaced key is still published after the overlap")
	}
	if bytes.Contains(jwks, []byte(`"d"`)) || bytes.Contains(jwks, []byte(`"p"`)) {
		t.Fatal("the JWKS holds a private member")
	}
}

// On a schedule of seconds a replica that did not rotate rereads the set
// within a quarter of the lead, not the minute it waits on a schedule of
// days: it publishes the successor another replica made and signs with it
// when due.
func TestToolKeysRereadWithinTheLead(t *testing.T) {
	box, err := secretbox.New(bytes.Repeat([]byte{1}, 32), bytes.Repeat([]byte{2}, 32))
	if err != nil {
		t.Fatal(err)
	}
	store := &memstore.ToolKeys{}
	c := &clock{now: time.Date(2026, 11, 26, 8, 0, 0, 0, time.UTC)}
	r := ltidomain.ToolKeyRotation{Every: 8 * time.Second, Lead: 4 * time.Second, Overlap: 8 * time.Second}
	a, b := ltiapp.NewToolKeys(store, box, r, c.Now), ltiapp.NewToolKeys(store, box, r, c.Now)
	ctx := context.Background()
	if err := a.Rotate(ctx); err != nil {
		t.Fatal(err)
	}
	claims := map[string]any{"iss": "tool", "aud": "platform"}
	token, _ := b.Sign(ctx, claims) // b reads the set
	first := verifies(t, b, token)

	c.Add(4 * time.Second) // the successor's lead begins
	if err := a.Rotate(ctx); err != nil {
		t.Fatal(err)
	}
	c.Add(time.Second) // a quarter of the lead
	jwks, _ := b.JWKS(ctx)
	var published struct{ Keys []struct{ KID string } }
	if err := json.Unmarshal(jwks, &published); err != nil || len(published.Keys) != 2 {
		t.Fatalf("a quarter of the lead on, the other replica publishes %s (%v), want 2 keys", jwks, err)
	}
	c.Add(3 * time.Second) // the successor's time; b has not reread since
	token, _ = b.Sign(ctx, claims)
	if kid := verifies(t, a, token); kid == first {
		t.Fatal("the other replica still signs with the replaced key when its successor is due")
	}
}
