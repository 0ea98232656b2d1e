package app_test

import (
	"context"
	"strconv"
	"testing"

	"github.com/liveproctor/workspaces/services/workspace/internal/app"
)

// BenchmarkAuthenticate is the credential check every call makes: from the
// cache (the hot path) and, for comparison, with the cache defeated.
func BenchmarkAuthenticate(b *testing.B) {
	b.Run("cached", func(b *testing.B) {
		f := newFixture(b)
		ctx := context.Background()
		b.ReportAllocs()
		for b.Loop() {
			if _, err := f.app.Authenticate(ctx, rootKey, rootSecret); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("wrong-secret", func(b *testing.B) {
		f := newFixture(b)
		ctx := context.Background()
		b.ReportAllocs()
		for b.Loop() {
			if _, err := f.app.Authenticate(ctx, rootKey, "wrong"); err == nil {
				b.Fatal("accepted a wrong secret")
			}
		}
	})
}

// BenchmarkCreateWorkspace is a whole create on the in-memory store: input
// checks, key generation, sealing and digesting secrets.
func BenchmarkCreateWorkspace(b *testing.B) {
	f := newFixture(b)
	ctx := context.Background()
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		i++
		in := app.CreateInput{ID: "bench-" + strconv.Itoa(i), Name: "Bench", Type: "CAMPUS"}
		if _, err := f.app.CreateWorkspace(ctx, f.root, in); err != nil {
			b.Fatal(err)
		}
	}
}
