package app_test

import (
	"context"
	"errors"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/liveproctor/workspaces/services/workspace/internal/adapters/memstore"
	"github.com/liveproctor/workspaces/services/workspace/internal/app"
	"github.com/liveproctor/workspaces/services/workspace/internal/domain"
)

// waker records the wakes of the webhook deliveries.
type waker struct {
	mu    sync.Mutex
	wakes []wake
}

type wake struct {
	workspaceIDs []string
	at           time.Time
}

func (w *waker) Wake(_ context.Context, workspaceIDs []string, at time.Time) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.wakes = append(w.wakes, wake{slices.Sorted(slices.Values(workspaceIDs)), at})
	return nil
}

func (w *waker) last() wake {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.wakes[len(w.wakes)-1]
}

// The dispatcher reads a workspace's events and those of the workspaces it
// manages, settled, in id order, filtered by type; it finds one event by
// id only where the workspace sees it. Every publish wakes the deliveries
// of the workspace and of its managers for when its events settle.
func TestWebhookEvents(t *testing.T) {
	const settle = 2 * time.Second
	c := &clock{now: time.Date(2026, 11, 28, 8, 0, 0, 0, time.UTC)}
	repo := memstore.New()
	w := &waker{}
	f := newFixtureOn(t, repo, app.WithClock(c.Now), app.WithEventLog(repo, app.EventSettings{Settle: settle}), app.WithDeliveryWaker(w))
	events := app.NewWebhookEvents(f.app)
	ctx := context.Background()

	_, district := f.create(f.root, app.CreateInput{ID: "district"})
	c.Add(time.Millisecond)
	f.create(district, app.CreateInput{ID: "campus", Type: "CAMPUS"})
	if got, want := w.last(), (wake{[]string{"campus", "district", "root"}, c.Now().Add(settle + settle/10)}); !slices.Equal(got.workspaceIDs, want.workspaceIDs) || !got.at.Equal(want.at) {
		t.Fatalf("the campus's create woke %+v, want %+v", got, want)
	}
	next := func(workspaceID, after string, types ...domain.EventType) []domain.Event {
		t.Helper()
		got, err := events.Next(ctx, workspaceID, after, types, 10)
		if err != nil {
			t.Fatal(err)
		}
		return got
	}
	if got := next("district", ""); len(got) != 0 {
		t.Fatalf("events inside the settle window: %v", got)
	}
	c.Add(settle + time.Millisecond)
	got := next("district", "")
	if len(got) != 2 || got[0].WorkspaceID != "district" || got[1].WorkspaceID != "campus" || got[0].ID >= got[1].ID {
		t.Fatalf("the district's events: %+v, want its creation, then the campus's", got)
	}
	if after := next("district", got[0].ID); len(after) != 1 || after[0].ID != got[1].ID {
		t.Fatalf("after the first: %+v", after)
	}
	if campus := next("campus", ""); len(campus) != 1 || campus[0].ID != got[1].ID {
		t.Fatalf("the campus's events: %+v", campus)
	}
	if updates := next("district", "", domain.EventWorkspaceUpdated); len(updates) != 0 {
		t.Fatalf("updates before any: %+v", updates)
	}

	if e, err := events.Event(ctx, "district", got[1].ID); err != nil || e.ID != got[1].ID {
		t.Fatalf("a managed workspace's event: %+v, %v", e, err)
	}
	for _, lookup := range []struct{ workspace, id string }{{"campus", got[0].ID}, {"district", "0190000000000000000000000000"}} {
		if _, err := events.Event(ctx, lookup.workspace, lookup.id); !errors.Is(err, domain.ErrNotFound) {
			t.Fatalf("Event(%s, %s): %v, want ErrNotFound", lookup.workspace, lookup.id, err)
		}
	}
}
