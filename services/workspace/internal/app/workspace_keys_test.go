package app_test

import (
	"context"
	"errors"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/liveproctor/workspaces/pkg/fault"
	"github.com/liveproctor/workspaces/pkg/testenv"
	"github.com/liveproctor/workspaces/services/workspace/internal/adapters/memstore"
	"github.com/liveproctor/workspaces/services/workspace/internal/app"
	"github.com/liveproctor/workspaces/services/workspace/internal/app/apptest"
	"github.com/liveproctor/workspaces/services/workspace/internal/domain"
	ltidomain "github.com/liveproctor/workspaces/services/workspace/internal/lti/domain"
)

// clock is a settable clock for the app.
type clock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *clock) Now() time.Time      { c.mu.Lock(); defer c.mu.Unlock(); return c.now }
func (c *clock) Add(d time.Duration) { c.mu.Lock(); c.now = c.now.Add(d); c.mu.Unlock() }

var restTags = []domain.Tag{domain.RESTAccessTag}

func TestWorkspaceManagesItsOwnKeysAndManagersMayToo(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	res, self := f.create(f.root, app.CreateInput{ID: "w"})
	_, other := f.create(f.root, app.CreateInput{ID: "other"})

	own, err := f.app.CreateWorkspaceKey(ctx, self, "w", domain.NewKey{Name: "ci", Tags: restTags})
	if err != nil {
		t.Fatal(err)
	}
	if c, err := f.app.Authenticate(ctx, own.Key.AppKey, own.Key.AppSecret); err != nil || c.WorkspaceID != "w" || !c.RESTAccess {
		t.Fatalf("the new pair: %+v, %v", c, err)
	}
	if _, err := f.app.CreateWorkspaceKey(ctx, f.root, "w", domain.NewKey{Name: "by root", Tags: restTags}); err != nil {
		t.Fatalf("a manager: %v", err)
	}
	_, err = f.app.CreateWorkspaceKey(ctx, other, "w", domain.NewKey{Name: "x"})
	apptest.WantKind(t, err, fault.NotFound)
	_, err = f.app.RotateWorkspaceKey(ctx, other, "w", res.Server.ConsumerKey, nil)
	apptest.WantKind(t, err, fault.NotFound)
	_, err = f.app.RevokeWorkspaceKey(ctx, other, "w", own.Key.AppKey)
	apptest.WantKind(t, err, fault.NotFound)
	// Its own id does not reach another workspace's pair.
	_, err = f.app.RevokeWorkspaceKey(ctx, other, "other", own.Key.AppKey)
	apptest.WantKind(t, err, fault.NotFound)

	keys, err := f.app.ListWorkspaceKeys(ctx, self, "w")
	if err != nil || len(keys) != 4 {
		t.Fatalf("keys: %d, %v", len(keys), err)
	}
	names := []string{}
	for _, k := range keys {
		names = append(names, k.Name)
	}
	if !slices.Equal(names, []string{"server", "lti", "ci", "by root"}) {
		t.Fatalf("names %v", names)
	}
}

func TestRevokeTakesEffectAtOnceOnThisReplica(t *testing.T) {
	tell := &bus{}
	f := newFixture(t, app.WithChangeNotifier(tell))
	ctx := context.Background()
	_, self := f.create(f.root, app.CreateInput{ID: "w"})
	k, err := f.app.CreateWorkspaceKey(ctx, self, "w", domain.NewKey{Name: "ci", Tags: restTags})
	if err != nil {
		t.Fatal(err)
	}
	// Cached now.
	if _, err := f.app.Authenticate(ctx, k.Key.AppKey, k.Key.AppSecret); err != nil {
		t.Fatal(err)
	}
	if _, err := f.app.RevokeWorkspaceKey(ctx, self, "w", k.Key.AppKey); err != nil {
		t.Fatal(err)
	}
	_, err = f.app.Authenticate(ctx, k.Key.AppKey, k.Key.AppSecret)
	if !errors.Is(err, app.ErrBadCredentials) {
		t.Fatalf("a revoked pair: %v, want the wrong-secret answer", err)
	}
	if !tell.heard("keyPairs", k.Key.AppKey) {
		t.Fatal("the other replicas were not told")
	}
	_, err = f.app.RevokeWorkspaceKey(ctx, self, "w", self.AppKey)
	apptest.WantKind(t, err, fault.FailedPrecondition)
}

func TestRotatedPairsExpireByTheClockEvenWhenCached(t *testing.T) {
	c := &clock{now: time.Date(2026, 11, 22, 8, 0, 0, 0, time.UTC)}
	tell := &bus{}
	repo := memstore.New()
	f := newFixtureOn(t, repo, app.WithClock(c.Now), app.WithChangeNotifier(tell), app.WithEventLog(repo, app.EventSettings{}))
	ctx := context.Background()
	res, self := f.create(f.root, app.CreateInput{ID: "w"})
	old := res.Server

	hour := time.Hour
	r, err := f.app.RotateWorkspaceKey(ctx, self, "w", old.ConsumerKey, &hour)
	if err != nil {
		t.Fatal(err)
	}
	if !r.Previous.ExpiresAt.Equal(c.Now().Add(time.Hour)) || r.Successor.Name != "server" || !tell.heard("keyPairs", old.ConsumerKey) {
		t.Fatalf("rotation: %+v", r)
	}
	// Both work during the overlap; the old pair's cached credential
	// carries its expiry, and the caller reports it.
	got, err := f.app.Authenticate(ctx, old.ConsumerKey, old.SharedSecret)
	if err != nil || !got.KeyExpiresAt.Equal(r.Previous.ExpiresAt) {
		t.Fatalf("old pair during the overlap: %+v, %v", got, err)
	}
	if _, err := f.app.Authenticate(ctx, r.Successor.AppKey, r.Successor.AppSecret); err != nil {
		t.Fatal(err)
	}
	c.Add(time.Hour)
	_, err = f.app.Authenticate(ctx, old.ConsumerKey, old.SharedSecret)
	if !errors.Is(err, app.ErrBadCredentials) {
		t.Fatalf("old pair at its expiresAt: %v", err)
	}

	// The default overlap is a day; a rotated pair is not rotated again.
	r2, err := f.app.RotateWorkspaceKey(ctx, self, "w", r.Successor.AppKey, nil)
	if err != nil || !r2.Previous.ExpiresAt.Equal(c.Now().Add(24*time.Hour)) {
		t.Fatalf("default overlap: %+v, %v", r2.Previous, err)
	}
	_, err = f.app.RotateWorkspaceKey(ctx, self, "w", r.Successor.AppKey, nil)
	apptest.WantKind(t, err, fault.FailedPrecondition)
	_, err = f.app.RotateWorkspaceKey(ctx, self, "w", old.ConsumerKey, nil)
	apptest.WantKind(t, err, fault.NotFound)
	week := 8 * 24 * time.Hour
	_, err = f.app.RotateWorkspaceKey(ctx, self, "w", r2.Successor.AppKey, &week)
	apptest.WantKind(t, err, fault.Invalid)

	// The sweep removes what expired, and only that.
	swept, err := f.app.SweepExpiredKeys(ctx)
	if err != nil || len(swept["w"]) != 1 || swept["w"][0].AppKey != old.ConsumerKey {
		t.Fatalf("sweep: %v, %v", swept, err)
	}
	keys, err := f.app.ListWorkspaceKeys(ctx, f.root, "w")
	if err != nil || len(keys) != 3 { // lti, r.Successor (expiring), r2.Successor
		t.Fatalf("after the sweep: %d pairs, %v", len(keys), err)
	}
	tell.wantLast(t, "keyPairs", "w", old.ConsumerKey)
	if swept, err := f.app.SweepExpiredKeys(ctx); err != nil || len(swept) != 0 {
		t.Fatalf("a second sweep: %v, %v", swept, err)
	}
	if res, err := repo.AppKeyReservation(ctx, old.ConsumerKey); err != nil || !res.Retired {
		t.Fatalf("the swept key's reservation: %+v, %v; want retired", res, err)
	}

	// The sweep is the system's change, in the audit trail once settled.
	c.Add(time.Minute)
	page, err := f.app.ListWorkspaceEvents(ctx, f.root, app.EventsInput{WorkspaceID: "w", Types: []string{"keyPair.expired"}})
	if err != nil || len(page.Events) != 1 {
		t.Fatalf("expired events: %+v, %v", page.Events, err)
	}
	if e := page.Events[0]; !e.Actor.System || e.Target.ID != old.ConsumerKey {
		t.Fatalf("expired event = %+v", e)
	}
}

func TestRotatedLTIPairSignsLaunchesUntilItExpires(t *testing.T) {
	c := &clock{now: time.Date(2026, 11, 22, 8, 0, 0, 0, time.UTC)}
	repo := memstore.New()
	f := newFixtureOn(t, repo, app.WithClock(c.Now))
	ctx := context.Background()
	res, self := f.create(f.root, app.CreateInput{ID: "w"})
	minute := time.Minute
	r, err := f.app.RotateWorkspaceKey(ctx, self, "w", res.LTI.ConsumerKey, &minute)
	if err != nil {
		t.Fatal(err)
	}
	if r.Successor.Name != "lti" || len(r.Successor.Tags) != 0 {
		t.Fatalf("LTI successor: %+v", r.Successor)
	}
	// The launch checks themselves are covered in verify_lti_launch_test;
	// here: the pair the launch path looks up.
	w, err := repo.GetByAppKey(ctx, res.LTI.ConsumerKey)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.LTIKey(res.LTI.ConsumerKey, c.Now()); err != nil {
		t.Fatal(err)
	}
	if _, err := w.LTIKey(res.LTI.ConsumerKey, c.Now().Add(time.Minute)); !errors.Is(err, ltidomain.ErrLaunchUnknownKey) {
		t.Fatalf("expired LTI pair: %v", err)
	}
}

func TestKeyUsesAreRecordedOffThePathAndCoarsely(t *testing.T) {
	repo := &countingUses{Repository: memstore.New()}
	c := &clock{now: time.Date(2026, 11, 22, 8, 0, 0, 0, time.UTC)}
	f := newFixtureOn(t, repo, app.WithClock(c.Now))
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); f.app.RunBackground(ctx, time.Hour) }()
	t.Cleanup(func() { cancel(); <-done })

	res, _ := f.create(f.root, app.CreateInput{ID: "w"})
	for range 50 {
		if _, err := f.app.Authenticate(context.Background(), res.Server.ConsumerKey, res.Server.SharedSecret); err != nil {
			t.Fatal(err)
		}
	}
	lastUsed := func() time.Time {
		keys, err := f.app.ListWorkspaceKeys(context.Background(), f.root, "w")
		if err != nil {
			t.Fatal(err)
		}
		return keys[0].LastUsedAt
	}
	testenv.Eventually(t, 5*time.Second, func() error {
		if lastUsed().IsZero() {
			return errors.New("not recorded yet")
		}
		return nil
	}, "the server pair's use is recorded")
	first := lastUsed()
	c.Add(domain.KeyUseGranularity)
	if _, err := f.app.Authenticate(context.Background(), res.Server.ConsumerKey, res.Server.SharedSecret); err != nil {
		t.Fatal(err)
	}
	testenv.Eventually(t, 5*time.Second, func() error {
		if !lastUsed().After(first) {
			return errors.New("not moved yet")
		}
		return nil
	}, "lastUsedAt moves after the granularity")
	// The create's Authenticate, 50 within the granularity, one after: two
	// writes for this pair (the root's pair adds its own).
	if n := repo.writes(res.Server.ConsumerKey); n != 2 {
		t.Fatalf("%d writes for the server pair, want 2", n)
	}
}

// countingUses counts RecordKeyUse calls per app key.
type countingUses struct {
	domain.Repository
	mu sync.Mutex
	n  map[string]int
}

func (c *countingUses) RecordKeyUse(ctx context.Context, appKey string, at time.Time) error {
	c.mu.Lock()
	if c.n == nil {
		c.n = map[string]int{}
	}
	c.n[appKey]++
	c.mu.Unlock()
	return c.Repository.RecordKeyUse(ctx, appKey, at)
}

func (c *countingUses) writes(appKey string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.n[appKey]
}

// Concurrent key changes go through the revision-checked write: none is
// lost, whichever order they land in.
func TestConcurrentKeyChangesLoseNoPair(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	_, self := f.create(f.root, app.CreateInput{ID: "w"})
	var wg sync.WaitGroup
	errs := make(chan error, 6)
	for range 6 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, err := f.app.CreateWorkspaceKey(ctx, self, "w", domain.NewKey{Name: "parallel", Tags: restTags})
			errs <- err
		}()
	}
	wg.Wait()
	close(errs)
	made := 0
	for err := range errs {
		switch {
		case err == nil:
			made++
		case fault.KindOf(err) != fault.Aborted: // lost every retry: the caller is told
			t.Fatalf("a concurrent create: %v", err)
		}
	}
	keys, err := f.app.ListWorkspaceKeys(ctx, self, "w")
	if err != nil || len(keys) != 2+made {
		t.Fatalf("%d pairs after %d creates answered 200 (%v)", len(keys), made, err)
	}
}
