package repotest

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"

	"github.com/liveproctor/workspaces/services/workspace/internal/domain"
)

// eventStore is what a repository that also keeps the audit trail offers
// (app.EventLog, as far as these cases need it); a repository without it
// skips the checks of published events.
type eventStore interface {
	PublishOutbox(ctx context.Context, workspaceID string, newID func() string) error
	ListEvents(ctx context.Context, q domain.EventQuery) ([]domain.Event, error)
}

// concurrentRounds is how often each race is run: a store whose
// conditional write is not atomic lets two writers win in most rounds.
const concurrentRounds = 10

// concurrentWriters race in each round.
const concurrentWriters = 4

// concurrentUpdatesHaveOneWinner: writers that read the same revision and
// update at once leave exactly one winner and ErrRevisionChanged for every
// other; the stored workspace is the winner's, and so is the one event the
// revision published.
func concurrentUpdatesHaveOneWinner(t *testing.T, r domain.Repository) {
	ctx := context.Background()
	mustCreate(t, r, sample("a"))
	var winners []string
	for round := range concurrentRounds {
		copies := make([]*domain.Workspace, concurrentWriters)
		for i := range copies {
			copies[i] = mustGet(t, r, "a")
			name := fmt.Sprintf("Round %d writer %d", round, i)
			if err := copies[i].Update(domain.Changes{Name: &name}, t1); err != nil {
				t.Fatal(err)
			}
			copies[i].Attribute(domain.Actor{WorkspaceID: "root"}, fmt.Sprintf("r%d-w%d", round, i))
		}
		errs := race(concurrentWriters, func(i int) error {
			_, err := r.Update(ctx, copies[i])
			return err
		})
		won := -1
		for i, err := range errs {
			switch {
			case err == nil && won >= 0:
				t.Fatalf("round %d: writers %d and %d both won from revision %d", round, won, i, copies[i].Revision())
			case err == nil:
				won = i
			case !errors.Is(err, domain.ErrRevisionChanged):
				t.Fatalf("round %d, writer %d: %v, want ErrRevisionChanged", round, i, err)
			}
		}
		if won < 0 {
			t.Fatalf("round %d: no writer won", round)
		}
		got := mustGet(t, r, "a")
		if want := fmt.Sprintf("Round %d writer %d", round, won); got.Name() != want || got.Revision() != int64(round+2) {
			t.Fatalf("round %d: stored name %q revision %d, want %q at %d", round, got.Name(), got.Revision(), want, round+2)
		}
		winners = append(winners, fmt.Sprintf("r%d-w%d", round, won))
	}
	events, ok := r.(eventStore)
	if !ok {
		return
	}
	var n int
	if err := events.PublishOutbox(ctx, "a", func() string { n++; return fmt.Sprintf("%028d", n) }); err != nil {
		t.Fatal(err)
	}
	published, err := events.ListEvents(ctx, domain.EventQuery{WorkspaceID: "a", Limit: 100})
	if err != nil {
		t.Fatal(err)
	}
	var requests []string
	for _, e := range published {
		requests = append(requests, e.RequestID)
	}
	slices.Sort(requests)
	slices.Sort(winners)
	wantIDs(t, "the published events' requests", requests, winners)
}

// concurrentKeyChangesLoseNoPair: writers that each add a key pair, reading
// again after every lost race, all end up in the workspace.
func concurrentKeyChangesLoseNoPair(t *testing.T, r domain.Repository) {
	ctx := context.Background()
	mustCreate(t, r, sample("a"))
	const writers = 6 // a workspace holds at most 10 active pairs
	errs := race(writers, func(i int) error {
		appKey := fmt.Sprintf("added-%d", i)
		if err := r.ReserveAppKey(ctx, "a", appKey); err != nil {
			return err
		}
		for {
			w, err := r.Get(ctx, "a")
			if err != nil {
				return err
			}
			sealed := domain.SealedKey{AppKey: appKey, SealedSecret: []byte("s"), SecretDigest: []byte("d")}
			if _, err := w.CreateKey(domain.NewKey{Name: appKey}, sealed, t1); err != nil {
				return err
			}
			_, err = r.Update(ctx, w)
			if !errors.Is(err, domain.ErrRevisionChanged) {
				return err
			}
		}
	})
	for i, err := range errs {
		if err != nil {
			t.Fatalf("writer %d: %v", i, err)
		}
	}
	got := mustGet(t, r, "a")
	if len(got.Keys()) != 1+writers || got.Revision() < 1+writers {
		t.Fatalf("after %d concurrent key changes: %d pairs at revision %d, want %d pairs", writers, len(got.Keys()), got.Revision(), 1+writers)
	}
	for i := range writers {
		appKey := fmt.Sprintf("added-%d", i)
		if w, err := r.GetByAppKey(ctx, appKey); err != nil || w.ID() != "a" {
			t.Fatalf("GetByAppKey(%s) = %v, %v; want a", appKey, w, err)
		}
	}
}

// race runs n calls of f at once, as nearly as goroutines allow, and
// returns their errors by index.
func race(n int, f func(i int) error) []error {
	errs := make([]error, n)
	start := make(chan struct{})
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			<-start
			errs[i] = f(i)
		})
	}
	close(start)
	wg.Wait()
	return errs
}
