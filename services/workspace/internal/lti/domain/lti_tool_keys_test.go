package domain_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	ltidomain "github.com/liveproctor/workspaces/services/workspace/internal/lti/domain"
)

// keyMaker numbers the keys it makes.
func keyMaker() ltidomain.NewToolKey {
	n := 0
	return func(context.Context) (ltidomain.ToolKey, error) {
		n++
		return ltidomain.ToolKey{KID: fmt.Sprintf("k%d", n)}, nil
	}
}

func kids(keys []ltidomain.ToolKey) []string {
	out := make([]string, len(keys))
	for i, k := range keys {
		out[i] = k.KID
	}
	return out
}

// Over a year of daily checks: one key signs at any time, its successor is
// published Lead before it signs, a replaced key stays published for
// Overlap, and at most three keys are published at once.
func TestToolKeysRotate(t *testing.T) {
	r := ltidomain.ToolKeyRotation{Every: 30 * 24 * time.Hour, Lead: 48 * time.Hour, Overlap: 7 * 24 * time.Hour}
	if err := r.Check(); err != nil {
		t.Fatal(err)
	}
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	var s ltidomain.ToolKeys
	newKey := keyMaker()
	publishedAt := map[string]time.Time{}
	lastSigner := ""
	for day := 0; day <= 365; day++ {
		now := start.Add(time.Duration(day) * 24 * time.Hour)
		if _, err := s.Rotate(context.Background(), now, r, newKey); err != nil {
			t.Fatal(err)
		}
		for _, k := range s.Published() {
			if _, ok := publishedAt[k.KID]; !ok {
				publishedAt[k.KID] = now
			}
		}
		signing, err := s.Signing(now)
		if err != nil {
			t.Fatalf("day %d: %v", day, err)
		}
		if signing.KID != lastSigner {
			if day > 0 && now.Sub(publishedAt[signing.KID]) < r.Lead {
				t.Fatalf("day %d: %s signs %s after it was published, want at least %s", day, signing.KID, now.Sub(publishedAt[signing.KID]), r.Lead)
			}
			lastSigner = signing.KID
		}
		if n := len(s.Keys); n > 3 {
			t.Fatalf("day %d: %d keys published: %v", day, n, kids(s.Keys))
		}
	}
	if lastSigner == "k1" || len(publishedAt) < 12 {
		t.Fatalf("a year of rotation made %d keys, last signer %s", len(publishedAt), lastSigner)
	}
}

// A replaced key stays published for the overlap, then goes.
func TestToolKeysKeepTheReplacedKeyForTheOverlap(t *testing.T) {
	r := ltidomain.ToolKeyRotation{Every: 10 * time.Hour, Lead: 2 * time.Hour, Overlap: 5 * time.Hour}
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	var s ltidomain.ToolKeys
	newKey := keyMaker()
	step := func(d time.Duration) {
		now = now.Add(d)
		if _, err := s.Rotate(context.Background(), now, r, newKey); err != nil {
			t.Fatal(err)
		}
	}
	step(0)
	step(8 * time.Hour) // the lead: k2 published
	if got := fmt.Sprint(kids(s.Published())); got != "[k1 k2]" {
		t.Fatalf("at 8 h: %s", got)
	}
	if k, _ := s.Signing(now); k.KID != "k1" {
		t.Fatalf("at 8 h %s signs, want k1", k.KID)
	}
	step(2 * time.Hour) // 10 h: k2 signs, k1 retired
	if k, _ := s.Signing(now); k.KID != "k2" {
		t.Fatalf("at 10 h %s signs, want k2", k.KID)
	}
	step(4*time.Hour + 59*time.Minute)
	if got := fmt.Sprint(kids(s.Published())); got != "[k1 k2]" {
		t.Fatalf("within the overlap: %s", got)
	}
	step(time.Minute)
	if got := fmt.Sprint(kids(s.Published())); got != "[k2]" {
		t.Fatalf("after the overlap: %s", got)
	}
	if err := (ltidomain.ToolKeyRotation{Every: time.Hour, Lead: time.Hour, Overlap: time.Hour}).Check(); err == nil {
		t.Fatal("a rotation whose lead is as long as a key's life was accepted")
	}
}
