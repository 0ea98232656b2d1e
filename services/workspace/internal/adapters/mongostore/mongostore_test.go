package mongostore_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sync/atomic"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/liveproctor/workspaces/pkg/breaker"
	"github.com/liveproctor/workspaces/pkg/fault"
	"github.com/liveproctor/workspaces/pkg/testenv"
	"github.com/liveproctor/workspaces/services/workspace/internal/adapters/mongostore"
	"github.com/liveproctor/workspaces/services/workspace/internal/domain"
	"github.com/liveproctor/workspaces/services/workspace/internal/domain/repotest"
)

// One FerretDB serves every test of the package; each test gets its own
// database.
var (
	store   *testenv.Server
	client  *mongo.Client
	dbCount atomic.Int64
)

func TestMain(m *testing.M) {
	os.Exit(run(m))
}

func run(m *testing.M) int {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute) // the first build of FerretDB takes a while
	defer cancel()
	dir, err := os.MkdirTemp("", "mongostore-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(dir)
	store, err = testenv.StartFerretDB(ctx, testenv.FerretDBOptions{Dir: dir})
	if err != nil {
		fmt.Fprintln(os.Stderr, "start FerretDB:", err)
		return 1
	}
	defer store.Stop()
	client, err = connect(store.URI())
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer client.Disconnect(context.Background())
	return m.Run()
}

func connect(uri string) (*mongo.Client, error) {
	return mongo.Connect(options.Client().ApplyURI(uri).
		SetServerSelectionTimeout(2 * time.Second).
		SetConnectTimeout(2 * time.Second))
}

func newRepository(t *testing.T) *mongostore.Repository {
	t.Helper()
	db := client.Database(fmt.Sprintf("test%d", dbCount.Add(1)))
	t.Cleanup(func() { _ = db.Drop(context.Background()) })
	repo := mongostore.New(db)
	if err := repo.EnsureIndexes(context.Background()); err != nil {
		t.Fatal(err)
	}
	return repo
}

func TestRepositoryContract(t *testing.T) {
	repotest.Run(t, func(t *testing.T) domain.Repository { return newRepository(t) })
}

func TestEnsureIndexesIsRepeatable(t *testing.T) {
	repo := newRepository(t)
	if err := repo.EnsureIndexes(context.Background()); err != nil {
		t.Fatalf("second EnsureIndexes: %v", err)
	}
}

// A crash between reserving a key and inserting the workspace leaves a
// reservation no workspace lists: it must not authenticate as anything.
func TestLeftoverReservationDoesNotResolve(t *testing.T) {
	db := client.Database(fmt.Sprintf("test%d", dbCount.Add(1)))
	t.Cleanup(func() { _ = db.Drop(context.Background()) })
	repo := mongostore.New(db)
	ctx := context.Background()
	_, err := db.Collection(mongostore.AppKeysCollection).InsertOne(ctx,
		bson.D{{Key: "_id", Value: "orphan-key"}, {Key: "workspaceId", Value: "w1"}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := repo.GetByAppKey(ctx, "orphan-key"); fault.KindOf(err) != fault.NotFound {
		t.Fatalf("leftover reservation, no workspace: error = %v, want not found", err)
	}
	w := domain.UnmarshalWorkspaceFromDatabase(domain.StoredWorkspace{ID: "w1", Name: "W1", Type: domain.TypeCampus,
		Keys: []domain.KeyPair{{AppKey: "real-key", Role: domain.RoleServer}}, CreatedAt: time.Now(), UpdatedAt: time.Now()})
	if err := repo.Create(ctx, w); err != nil {
		t.Fatal(err)
	}
	if _, err := repo.GetByAppKey(ctx, "orphan-key"); fault.KindOf(err) != fault.NotFound {
		t.Fatalf("leftover reservation, workspace without the key: error = %v, want not found", err)
	}
}

// The store going away answers Unavailable within the caller's deadline, and
// the same repository works again once it is back.
func TestStoreDownIsUnavailable(t *testing.T) {
	repo := newRepository(t)
	ctx := context.Background()
	w := domain.UnmarshalWorkspaceFromDatabase(domain.StoredWorkspace{ID: "w1", Name: "W1", Type: domain.TypeCampus, CreatedAt: time.Now(), UpdatedAt: time.Now()})
	if err := repo.Create(ctx, w); err != nil {
		t.Fatal(err)
	}
	if err := store.Stop(); err != nil {
		t.Fatal(err)
	}
	restarted := false
	t.Cleanup(func() {
		if !restarted {
			_ = store.Restart(context.Background())
		}
	})

	callCtx, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	_, err := repo.Get(callCtx, "w1")
	if kind := fault.KindOf(err); kind != fault.Unavailable {
		t.Fatalf("Get with the store down: error = %v (kind %v), want Unavailable", err, kind)
	}
	if err := store.Restart(ctx); err != nil {
		t.Fatal(err)
	}
	restarted = true
	testenv.Eventually(t, 20*time.Second, func() error {
		got, err := repo.Get(ctx, "w1")
		if err == nil && got.Name() != "W1" {
			return fmt.Errorf("got %+v", got)
		}
		return err
	}, "Get after the store restarted returns W1")
}

// With a breaker, a store that hangs (paused: it accepts connections and
// answers nothing) ends calls as Unavailable once the breaker's probe finds
// it so, long before the caller's deadline; calls then fail at once, and
// the repository works again once the store answers, without a restart.
func TestHungStoreFailsFastWithBreaker(t *testing.T) {
	timeout := 500 * time.Millisecond
	c, err := mongo.Connect(options.Client().ApplyURI(store.URI()).SetServerSelectionTimeout(timeout).SetConnectTimeout(timeout))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Disconnect(context.Background()) })
	db := c.Database(fmt.Sprintf("test%d", dbCount.Add(1)))
	t.Cleanup(func() { _ = db.Drop(context.Background()) })
	settings := breaker.Defaults(timeout)
	settings.Unreachable = mongostore.Unreachable
	b := breaker.New(settings)
	repo := mongostore.New(db, mongostore.WithBreaker(b))
	probeCtx, stopProbes := context.WithCancel(context.Background())
	probed := make(chan struct{})
	go func() { defer close(probed); b.Run(probeCtx, repo.Ping, nil) }()
	t.Cleanup(func() { stopProbes(); <-probed })

	ctx := context.Background()
	sample := func(id string) *domain.Workspace {
		return domain.UnmarshalWorkspaceFromDatabase(domain.StoredWorkspace{ID: id, Name: id, Type: domain.TypeCampus,
			Keys: []domain.KeyPair{{AppKey: "key-" + id, Role: domain.RoleServer}}, CreatedAt: time.Now(), UpdatedAt: time.Now()})
	}
	if err := repo.Create(ctx, sample("w1")); err != nil {
		t.Fatal(err)
	}
	if err := store.Pause(); err != nil {
		t.Fatal(err)
	}
	resumed := false
	t.Cleanup(func() {
		if !resumed {
			_ = store.Resume()
		}
	})

	// The deadline only tells an answer from a hang: DeadlineExceeded
	// would mean the call waited for it.
	callCtx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	if _, err := repo.Get(callCtx, "w1"); fault.KindOf(err) != fault.Unavailable {
		t.Fatalf("Get from a hung store: %v (kind %v), want Unavailable", err, fault.KindOf(err))
	}
	if err := b.Err(); !errors.Is(err, breaker.ErrOpen) {
		t.Fatalf("breaker after a call to a hung store: %v, want open", err)
	}
	if err := repo.Create(callCtx, sample("w2")); fault.KindOf(err) != fault.Unavailable || !errors.Is(err, breaker.ErrOpen) {
		t.Fatalf("Create with the breaker open: %v, want Unavailable at once", err)
	}

	if err := store.Resume(); err != nil {
		t.Fatal(err)
	}
	resumed = true
	testenv.Eventually(t, 20*time.Second, func() error {
		_, err := repo.Get(ctx, "w1")
		return err
	}, "Get once the store answers again")
	if err := repo.Create(ctx, sample("w3")); err != nil {
		t.Fatal(err)
	}
	if _, err := repo.GetByAppKey(ctx, "key-w3"); err != nil {
		t.Fatal(err)
	}
}

// Workspaces stored before list snapshots existed are listed: the first
// EnsureIndexes on such a store writes their snapshot, and a list entry that
// lags behind its workspace (here: still there after the delete) never
// shows a deleted workspace nor shortens a page.
func TestListEntriesOfOlderWorkspaces(t *testing.T) {
	db := client.Database(fmt.Sprintf("test%d", dbCount.Add(1)))
	t.Cleanup(func() { _ = db.Drop(context.Background()) })
	ctx := context.Background()
	older := mongostore.New(db)
	for _, id := range []string{"b", "a", "c"} {
		w := domain.UnmarshalWorkspaceFromDatabase(domain.StoredWorkspace{ID: id, Name: "W " + id, Type: domain.TypeCampus,
			Managers: []string{"root"}, CreatedAt: time.Now(), UpdatedAt: time.Now()})
		if err := older.Create(ctx, w); err != nil {
			t.Fatal(err)
		}
	}
	// As a store written before snapshots: no snapshot, no changes.
	for _, c := range []string{mongostore.ListChangesCollection, mongostore.ListChunksCollection, mongostore.StoreMetaCollection} {
		if err := db.Collection(c).Drop(ctx); err != nil {
			t.Fatal(err)
		}
	}
	repo := mongostore.New(db)
	if err := repo.EnsureIndexes(ctx); err != nil {
		t.Fatal(err)
	}
	listIDs := func(limit int) []string {
		t.Helper()
		ws, err := repo.List(ctx, domain.ListQuery{VisibleTo: "root", NameContains: "w ", Limit: limit})
		if err != nil {
			t.Fatal(err)
		}
		ids := make([]string, len(ws))
		for i, w := range ws {
			ids[i] = w.ID()
		}
		return ids
	}
	if got := fmt.Sprint(listIDs(10)); got != "[a b c]" {
		t.Fatalf("list after the entries were built = %s, want [a b c]", got)
	}

	// Delete b behind the entries' back: its entry stays, the list drops it.
	if _, err := db.Collection(mongostore.WorkspacesCollection).UpdateOne(ctx, bson.D{{Key: "_id", Value: "b"}},
		bson.D{{Key: "$set", Value: bson.D{{Key: "deletedAt", Value: time.Now()}}}}); err != nil {
		t.Fatal(err)
	}
	if got := fmt.Sprint(listIDs(10)); got != "[a c]" {
		t.Fatalf("list with a lagging entry = %s, want [a c]", got)
	}
	// A page of two reads on past the lagging entry, so it is still full.
	if got := fmt.Sprint(listIDs(2)); got != "[a c]" {
		t.Fatalf("page of 2 with a lagging entry = %s, want [a c]", got)
	}
}

// Update's revision check is a claim per revision: a fresh claim held by
// another writer is a changed revision; a claim whose holder died long ago
// without writing is taken over, so the workspace is not blocked for good.
func TestRevisionClaims(t *testing.T) {
	db := client.Database(fmt.Sprintf("test%d", dbCount.Add(1)))
	t.Cleanup(func() { _ = db.Drop(context.Background()) })
	ctx := context.Background()
	repo := mongostore.New(db)
	if err := repo.EnsureIndexes(ctx); err != nil {
		t.Fatal(err)
	}
	w := domain.UnmarshalWorkspaceFromDatabase(domain.StoredWorkspace{ID: "w", Name: "W", Type: domain.TypeCampus,
		CreatedAt: time.Now(), UpdatedAt: time.Now()})
	if err := repo.Create(ctx, w); err != nil {
		t.Fatal(err)
	}
	claims := db.Collection(mongostore.RevisionClaimsCollection)
	rename := func(name string) error {
		t.Helper()
		got, err := repo.Get(ctx, "w")
		if err != nil {
			t.Fatal(err)
		}
		if err := got.Update(domain.Changes{Name: &name}, time.Now()); err != nil {
			t.Fatal(err)
		}
		_, err = repo.Update(ctx, got)
		return err
	}

	// A writer holds the claim on revision 1 right now.
	if _, err := claims.InsertOne(ctx, bson.D{{Key: "_id", Value: "w@1.0"}, {Key: "createdAt", Value: time.Now()}}); err != nil {
		t.Fatal(err)
	}
	if err := rename("Blocked"); !errors.Is(err, domain.ErrRevisionChanged) {
		t.Fatalf("Update while another writer holds the claim: %v, want revision changed", err)
	}
	// That writer died an hour ago without writing: the claim is taken over.
	if _, err := claims.UpdateOne(ctx, bson.D{{Key: "_id", Value: "w@1.0"}},
		bson.D{{Key: "$set", Value: bson.D{{Key: "createdAt", Value: time.Now().Add(-time.Hour)}}}}); err != nil {
		t.Fatal(err)
	}
	if err := rename("Taken over"); err != nil {
		t.Fatalf("Update after the claim's holder died: %v", err)
	}
	got, err := repo.Get(ctx, "w")
	if err != nil {
		t.Fatal(err)
	}
	if got.Name() != "Taken over" || got.Revision() != 2 {
		t.Fatalf("after the takeover: name %q revision %d, want \"Taken over\" 2", got.Name(), got.Revision())
	}

	// A write releases its claim; a writer that read the revision before
	// still loses, since the workspace has moved past it.
	stale, err := repo.Get(ctx, "w")
	if err != nil {
		t.Fatal(err)
	}
	if err := rename("Current"); err != nil {
		t.Fatal(err)
	}
	// Only the dead writer's claim stays (its outcome is unknown).
	if n, err := claims.CountDocuments(ctx, bson.D{}); err != nil || n != 1 {
		t.Fatalf("claims left after the writes: %d, %v; want the dead writer's only", n, err)
	}
	name := "Stale"
	if err := stale.Update(domain.Changes{Name: &name}, time.Now()); err != nil {
		t.Fatal(err)
	}
	if _, err := repo.Update(ctx, stale); !errors.Is(err, domain.ErrRevisionChanged) {
		t.Fatalf("Update from a revision already written: %v, want revision changed", err)
	}
	if got, _ := repo.Get(ctx, "w"); got.Name() != "Current" || got.Revision() != 3 {
		t.Fatalf("after the stale write: name %q revision %d", got.Name(), got.Revision())
	}
}

// A list entry is one string of fields; a filter matches each field where
// it stands: a caller whose id equals a state, or a search that matches an
// id but no name, selects nothing it should not.
func TestListEntryFieldsDoNotMix(t *testing.T) {
	repo := newRepository(t)
	ctx := context.Background()
	w := domain.UnmarshalWorkspaceFromDatabase(domain.StoredWorkspace{ID: "ws-1", Name: "Springfield", Type: domain.TypeCampus,
		Address: domain.Address{State: "US-CA", Country: "US"}, Managers: []string{"root"}, CreatedAt: time.Now(), UpdatedAt: time.Now()})
	if err := repo.Create(ctx, w); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		q    domain.ListQuery
		want string
	}{
		{"its manager", domain.ListQuery{VisibleTo: "root"}, "[ws-1]"},
		{"itself", domain.ListQuery{VisibleTo: "ws-1"}, "[ws-1]"},
		{"a caller named like its state", domain.ListQuery{VisibleTo: "US-CA"}, "[]"},
		{"a caller named like a prefix of its manager", domain.ListQuery{VisibleTo: "ro"}, "[]"},
		{"a search matching its id only", domain.ListQuery{VisibleTo: "root", NameContains: "ws-"}, "[]"},
		{"a search across name and id", domain.ListQuery{VisibleTo: "root", NameContains: "field\x00ws"}, "[]"},
		{"its state", domain.ListQuery{VisibleTo: "root", States: []string{"US-TX", "US-CA"}}, "[ws-1]"},
		{"another state", domain.ListQuery{VisibleTo: "root", States: []string{"US"}}, "[]"},
	} {
		tc.q.Limit = 10
		ws, err := repo.List(ctx, tc.q)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		ids := make([]string, len(ws))
		for i, w := range ws {
			ids[i] = w.ID()
		}
		if got := fmt.Sprint(ids); got != tc.want {
			t.Errorf("%s: list = %s, want %s", tc.name, got, tc.want)
		}
	}
}
