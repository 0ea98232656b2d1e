package mongostore_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sync"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/liveproctor/workspaces/pkg/breaker"
	"github.com/liveproctor/workspaces/pkg/fault"
	"github.com/liveproctor/workspaces/pkg/testenv"
	"github.com/liveproctor/workspaces/services/workspace/internal/adapters/mongoconn"
	"github.com/liveproctor/workspaces/services/workspace/internal/adapters/mongoconn/indexcheck"
	"github.com/liveproctor/workspaces/services/workspace/internal/adapters/mongoconn/mongotest"
	"github.com/liveproctor/workspaces/services/workspace/internal/adapters/mongostore"
	"github.com/liveproctor/workspaces/services/workspace/internal/domain"
	"github.com/liveproctor/workspaces/services/workspace/internal/domain/repotest"
)

// One FerretDB serves every test of the package; each test gets its own
// database. Every command sent through its client is logged and checked
// (indexcheck). Its TTL monitor runs every 100 ms, not every minute, so
// that TestEventsRetention sees events expire.
var (
	commands = indexcheck.NewLog(mongostore.DeclaredIndexes(), "find", "update", "delete")
	env      = mongotest.New(mongotest.Options{Name: "mongostore", TTLMonitorInterval: 100 * time.Millisecond, Commands: commands})
)

func TestMain(m *testing.M) {
	os.Exit(env.Run(m))
}

// newRepository is a prepared repository on a database of its own.
func newRepository(t *testing.T, opts ...mongostore.Option) *mongostore.Repository {
	repo, _ := newRepositoryIn(t, opts...)
	return repo
}

// newRepositoryIn is newRepository, and the name of its database.
func newRepositoryIn(t *testing.T, opts ...mongostore.Option) (*mongostore.Repository, string) {
	t.Helper()
	db := env.Database(t)
	repo := mongostore.New(db, opts...)
	if err := repo.Prepare(context.Background()); err != nil {
		t.Fatal(err)
	}
	return repo, db.Name()
}

func TestRepositoryContract(t *testing.T) {
	repotest.Run(t, func(t *testing.T) domain.Repository { return newRepository(t) })
}

// Prepare can run at every start; the events' expiry index is a TTL index
// of the retention, which a start with another retention moves.
func TestPrepareIsRepeatable(t *testing.T) {
	repo, name := newRepositoryIn(t)
	ctx := context.Background()
	if err := repo.Prepare(ctx); err != nil {
		t.Fatalf("second Prepare: %v", err)
	}
	events := env.Client().Database(name).Collection(mongostore.EventsCollection)
	indexcheck.WantTTL(t, events, "expiry", 90*24*60*60)
	if err := mongostore.New(env.Client().Database(name), mongostore.WithEventRetention(time.Hour)).Prepare(ctx); err != nil {
		t.Fatalf("Prepare with another retention: %v", err)
	}
	indexcheck.WantTTL(t, events, "expiry", 3600)
}

// Two replicas of the workspace service, each with its own repository and
// connection pool, updating one workspace from the same revision at once:
// exactly one succeeds, and the other gets the domain's conflict.
func TestTwoReplicasUpdatingAtOnceHaveOneWinner(t *testing.T) {
	first, name := newRepositoryIn(t)
	other, err := mongo.Connect(options.Client().ApplyURI(env.Server().URI()).SetServerSelectionTimeout(2 * time.Second))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = other.Disconnect(context.Background()) })
	replicas := []*mongostore.Repository{first, mongostore.New(other.Database(name))}
	ctx := context.Background()
	w := domain.UnmarshalWorkspaceFromDatabase(domain.StoredWorkspace{ID: "w1", Name: "W1", Type: domain.TypeCampus, CreatedAt: time.Now(), UpdatedAt: time.Now()})
	if err := first.Create(ctx, w); err != nil {
		t.Fatal(err)
	}
	const rounds = 20
	for round := range rounds {
		copies := make([]*domain.Workspace, len(replicas))
		for i, r := range replicas {
			c, err := r.Get(ctx, "w1")
			if err != nil {
				t.Fatal(err)
			}
			name := fmt.Sprintf("Round %d replica %d", round, i)
			if err := c.Update(domain.Changes{Name: &name}, time.Now()); err != nil {
				t.Fatal(err)
			}
			copies[i] = c
		}
		errs := make([]error, len(replicas))
		start := make(chan struct{})
		var wg sync.WaitGroup
		for i, r := range replicas {
			wg.Go(func() {
				<-start
				_, errs[i] = r.Update(ctx, copies[i])
			})
		}
		close(start)
		wg.Wait()
		won := -1
		for i, err := range errs {
			switch {
			case err == nil && won >= 0:
				t.Fatalf("round %d: both replicas won", round)
			case err == nil:
				won = i
			case !errors.Is(err, domain.ErrRevisionChanged) || fault.KindOf(err) != fault.PreconditionFailed:
				t.Fatalf("round %d, replica %d: %v, want the revision conflict", round, i, err)
			}
		}
		got, err := first.Get(ctx, "w1")
		if err != nil {
			t.Fatal(err)
		}
		if want := fmt.Sprintf("Round %d replica %d", round, won); won < 0 || got.Name() != want || got.Revision() != int64(round+2) {
			t.Fatalf("round %d: winner %d, stored %q at revision %d; want one winner's name at revision %d", round, won, got.Name(), got.Revision(), round+2)
		}
	}
}

// A crash between reserving a key and inserting the workspace leaves a
// reservation no workspace lists: it must not authenticate as anything.
func TestLeftoverReservationDoesNotResolve(t *testing.T) {
	db := env.Database(t)
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
	if err := env.Server().Stop(); err != nil {
		t.Fatal(err)
	}
	restarted := false
	t.Cleanup(func() {
		if !restarted {
			_ = env.Server().Restart(context.Background())
		}
	})

	callCtx, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	_, err := repo.Get(callCtx, "w1")
	if kind := fault.KindOf(err); kind != fault.Unavailable {
		t.Fatalf("Get with the store down: error = %v (kind %v), want Unavailable", err, kind)
	}
	if err := env.Server().Restart(ctx); err != nil {
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
	c, err := mongo.Connect(options.Client().ApplyURI(env.Server().URI()).SetServerSelectionTimeout(timeout).SetConnectTimeout(timeout))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Disconnect(context.Background()) })
	db := c.Database(env.Database(t).Name()) // its own database, through the short timeouts
	settings := breaker.Defaults(timeout)
	settings.Unreachable = mongoconn.Unreachable
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
	if err := env.Server().Pause(); err != nil {
		t.Fatal(err)
	}
	resumed := false
	t.Cleanup(func() {
		if !resumed {
			_ = env.Server().Resume()
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

	if err := env.Server().Resume(); err != nil {
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

// A store written by the version before logins read the digests of the
// workspaces' LTI deployments: Prepare gives its documents that field, so
// a login naming a deployment of theirs finds them.
func TestPrepareUpgradesEarlierDocuments(t *testing.T) {
	db := env.Database(t)
	ctx := context.Background()
	at := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	earlier := func(id string, managers []string) bson.D {
		return bson.D{{Key: "_id", Value: id}, {Key: "name", Value: "W " + id}, {Key: "nameKey", Value: "w " + id},
			{Key: "type", Value: "CAMPUS"}, {Key: "managers", Value: managers}, {Key: "visibleTo", Value: append([]string{id}, managers...)},
			{Key: "keys", Value: bson.A{}}, {Key: "createdAt", Value: at}, {Key: "updatedAt", Value: at}, {Key: "deletedAt", Value: nil},
			{Key: "revision", Value: int64(1)}, {Key: "outbox", Value: bson.A{}}}
	}
	docs := []any{earlier("root", []string{}), earlier("a", []string{"root"}), earlier("b", []string{"root"})}
	docs[1] = append(docs[1].(bson.D), bson.E{Key: "ltiRegistrations", Value: bson.A{bson.D{
		{Key: "id", Value: "reg-a"}, {Key: "issuer", Value: "https://canvas.instructure.com"}, {Key: "clientId", Value: "100"},
		{Key: "deploymentIds", Value: bson.A{"1:a"}}, {Key: "authLoginUrl", Value: "https://sso.canvaslms.com/api/lti/authorize_redirect"},
		{Key: "jwksUrl", Value: "https://sso.canvaslms.com/api/lti/security/jwks"}, {Key: "createdAt", Value: at}, {Key: "updatedAt", Value: at},
	}}})
	if _, err := db.Collection(mongostore.WorkspacesCollection).InsertMany(ctx, docs); err != nil {
		t.Fatal(err)
	}
	repo := mongostore.New(db)
	if err := repo.Prepare(ctx); err != nil {
		t.Fatal(err)
	}
	owning, err := repo.WorkspacesWithLTIIssuer(ctx, "https://canvas.instructure.com", "1:a", 2)
	if err != nil || len(owning) != 1 || owning[0].ID() != "a" {
		t.Fatalf("workspaces holding the deployment after the upgrade: %d, %v; want a", len(owning), err)
	}
}
