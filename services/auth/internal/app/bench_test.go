package app_test

import (
	"context"
	"testing"
	"time"

	"github.com/liveproctor/workspaces/pkg/ratelimit"

	"github.com/liveproctor/workspaces/services/auth/internal/adapters/memstore"
	"github.com/liveproctor/workspaces/services/auth/internal/app"
	"github.com/liveproctor/workspaces/services/auth/internal/domain"
)

// savingStore is a LoginStore that runs no limits: what the benchmark
// measures is the application's own work.
type savingStore struct{ *memstore.Store }

func (s savingStore) SaveLogin(ctx context.Context, d domain.Digest, session domain.Session, _ app.LoginLimits) error {
	return s.Save(ctx, d, session)
}

// openLimits limits nothing, but puts the policy in force, so that the
// application hands a remembered login to its LoginStore.
type openLimits struct{}

func (openLimits) CheckFailures(context.Context, string) error                 { return nil }
func (openLimits) Failed(context.Context, string)                              {}
func (openLimits) LimitKeyPair(context.Context, string, ratelimit.Limit) error { return nil }
func (openLimits) LimitToken(context.Context, string) error                    { return nil }

// BenchmarkRememberedLogin is the busiest path of the service: a login
// whose access is remembered (access.go), its limits and save handed to
// the store in one step.
func BenchmarkRememberedLogin(b *testing.B) {
	ws := &workspaces{status: map[string]app.WorkspaceStatus{"w1": {Active: true}}}
	a := app.New(savingStore{memstore.New(time.Now)}, ws, app.Settings{ServiceAuthorization: service, AccessCacheTTL: time.Hour},
		app.WithLimits(openLimits{}))
	ctx := context.Background()
	if _, _, err := a.CreateToken(ctx, alice, "ada@example.com", "w1"); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, _, err := a.CreateToken(ctx, alice, "ada@example.com", "w1"); err != nil {
			b.Fatal(err)
		}
	}
}
