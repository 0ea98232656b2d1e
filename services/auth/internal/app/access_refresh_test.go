package app_test

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/liveproctor/workspaces/services/auth/internal/adapters/memstore"
	"github.com/liveproctor/workspaces/services/auth/internal/app"
)

// gatedWorkspaces answers as workspaces does once gate lets each call go.
type gatedWorkspaces struct {
	*workspaces
	gate    chan struct{}
	asked   chan struct{} // one send per call, as it starts (buffered)
	started atomic.Int32
}

func (g *gatedWorkspaces) Status(ctx context.Context, authz, id string) (app.WorkspaceStatus, error) {
	g.started.Add(1)
	g.asked <- struct{}{}
	<-g.gate
	return g.workspaces.Status(ctx, authz, id)
}

// newGatedApp is an app whose workspace service answers only when let,
// on a clock the test moves.
func newGatedApp(t *testing.T) (*app.App, *gatedWorkspaces, func(time.Duration)) {
	t.Helper()
	g := &gatedWorkspaces{workspaces: &workspaces{status: map[string]app.WorkspaceStatus{"w1": {Active: true}}}, gate: make(chan struct{}), asked: make(chan struct{}, 100)}
	var mu sync.Mutex
	now := time.Date(2026, 11, 26, 8, 0, 0, 0, time.UTC)
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	advance := func(d time.Duration) { mu.Lock(); now = now.Add(d); mu.Unlock() }
	a := app.New(memstore.New(clock), g, app.Settings{ServiceAuthorization: service, AccessCacheTTL: 5 * time.Second}, app.WithClock(clock))
	return a, g, advance
}

// The logins of a busy key pair that find no remembered access make one
// call to the workspace service between them, not one each.
func TestConcurrentLoginsAskForAccessOnce(t *testing.T) {
	a, g, _ := newGatedApp(t)
	var wg sync.WaitGroup
	errs := make(chan error, 64)
	for range 64 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, _, err := a.CreateToken(context.Background(), alice, "ada@example.com", "w1")
			errs <- err
		}()
	}
	<-g.asked // the first login has asked
	close(g.gate)
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	if n := g.started.Load(); n != 1 {
		t.Fatalf("%d calls to the workspace service, want 1", n)
	}
}

// A remembered access near its expiry keeps serving logins while one
// call renews it: no login waits on the workspace service.
func TestRememberedAccessIsRenewedAhead(t *testing.T) {
	a, g, advance := newGatedApp(t)
	ctx := context.Background()
	done := make(chan error)
	go func() {
		_, _, err := a.CreateToken(ctx, alice, "ada@example.com", "w1")
		done <- err
	}()
	g.gate <- struct{}{} // the first login's call
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	advance(4500 * time.Millisecond) // within the last fifth of the 5 s
	for range 20 {
		if _, _, err := a.CreateToken(ctx, alice, "ada@example.com", "w1"); err != nil {
			t.Fatal(err) // would hang here if a login waited on the renewal
		}
	}
	// The first login's call, then the renewal's, in the background.
	for range 2 {
		select {
		case <-g.asked:
		case <-time.After(10 * time.Second):
			t.Fatalf("%d calls started, want 2: the first and one renewal", g.started.Load())
		}
	}
	if n := g.started.Load(); n != 2 {
		t.Fatalf("%d calls started, want 2: the first and one renewal", n)
	}
	g.gate <- struct{}{} // the renewal answers
	advance(time.Second) // past the first answer's life, within the renewal's
	if _, _, err := a.CreateToken(ctx, alice, "ada@example.com", "w1"); err != nil {
		t.Fatal(err)
	}
	if n := g.started.Load(); n != 2 {
		t.Fatalf("%d calls started, want 2: the renewal serves", n)
	}
}
