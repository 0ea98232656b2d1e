package repotest

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/liveproctor/workspaces/services/workspace/internal/domain"
	ltidomain "github.com/liveproctor/workspaces/services/workspace/internal/lti/domain"
)

// ToolKeyStore runs the contract of a ltidomain.ToolKeyStore: an empty set
// before the first save, a round trip of every field, and writes checked
// against the revision, one winner among concurrent ones.
func ToolKeyStore(t *testing.T, newStore func(t *testing.T) ltidomain.ToolKeyStore) {
	t.Run("RoundTripAndRevisions", func(t *testing.T) { toolKeyRoundTrip(t, newStore(t)) })
	t.Run("ConcurrentFirstSavesHaveOneWinner", func(t *testing.T) { toolKeyFirstSaves(t, newStore(t)) })
}

func toolKey(t *testing.T, kid string, created time.Time) ltidomain.ToolKey {
	t.Helper()
	k, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	return ltidomain.ToolKey{KID: kid, Public: &k.PublicKey, Sealed: []byte("sealed " + kid),
		CreatedAt: created, SignsFrom: created.Add(time.Hour)}
}

func toolKeyRoundTrip(t *testing.T, store ltidomain.ToolKeyStore) {
	ctx := context.Background()
	s, err := store.ToolKeys(ctx)
	if err != nil || s.Revision != 0 || len(s.Keys) != 0 {
		t.Fatalf("before any save: %+v, %v", s, err)
	}
	at := time.Date(2026, 11, 26, 8, 0, 0, 0, time.UTC)
	first := toolKey(t, "k1", at)
	first.RetiredAt = at.Add(48 * time.Hour)
	s.Keys = []ltidomain.ToolKey{first, toolKey(t, "k2", at.Add(time.Hour))}
	if err := store.SaveToolKeys(ctx, s); err != nil {
		t.Fatal(err)
	}
	got, err := store.ToolKeys(ctx)
	if err != nil || got.Revision != 1 || len(got.Keys) != 2 {
		t.Fatalf("after the first save: revision %d, %d keys, %v", got.Revision, len(got.Keys), err)
	}
	for i, k := range got.Keys {
		want := s.Keys[i]
		if k.KID != want.KID || !k.Public.Equal(want.Public) || string(k.Sealed) != string(want.Sealed) ||
			!k.CreatedAt.Equal(want.CreatedAt) || !k.SignsFrom.Equal(want.SignsFrom) || !k.RetiredAt.Equal(want.RetiredAt) {
			t.Fatalf("key %d read back as %+v, want %+v", i, k, want)
		}
	}
	// A write from a stale read loses; one from the current read wins.
	if err := store.SaveToolKeys(ctx, s); !errors.Is(err, domain.ErrRevisionChanged) {
		t.Fatalf("a second first save: %v, want ErrRevisionChanged", err)
	}
	got.Keys = got.Keys[1:]
	if err := store.SaveToolKeys(ctx, got); err != nil {
		t.Fatal(err)
	}
	if err := store.SaveToolKeys(ctx, got); !errors.Is(err, domain.ErrRevisionChanged) {
		t.Fatalf("a save from revision 1 after revision 2: %v, want ErrRevisionChanged", err)
	}
	if final, _ := store.ToolKeys(ctx); final.Revision != 2 || len(final.Keys) != 1 || final.Keys[0].KID != "k2" {
		t.Fatalf("final set: revision %d, %d keys", final.Revision, len(final.Keys))
	}
}

// Replicas starting together each make a first key: one set is stored.
func toolKeyFirstSaves(t *testing.T, store ltidomain.ToolKeyStore) {
	ctx := context.Background()
	at := time.Date(2026, 11, 26, 8, 0, 0, 0, time.UTC)
	var wg sync.WaitGroup
	errs := make(chan error, 4)
	for _, kid := range []string{"a", "b", "c", "d"} {
		key := toolKey(t, kid, at)
		wg.Go(func() { errs <- store.SaveToolKeys(ctx, ltidomain.ToolKeys{Keys: []ltidomain.ToolKey{key}}) })
	}
	wg.Wait()
	close(errs)
	won := 0
	for err := range errs {
		switch {
		case err == nil:
			won++
		case !errors.Is(err, domain.ErrRevisionChanged):
			t.Fatal(err)
		}
	}
	if s, _ := store.ToolKeys(ctx); won != 1 || s.Revision != 1 || len(s.Keys) != 1 {
		t.Fatalf("%d first saves won; stored revision %d with %d keys", won, s.Revision, len(s.Keys))
	}
}
