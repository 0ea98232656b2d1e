package mongostore_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"

	"github.com/liveproctor/workspaces/services/workspace/internal/adapters/mongostore"
	"github.com/liveproctor/workspaces/services/workspace/internal/domain"
)

// replicas returns n repositories on one fresh database, as n replicas of
// the service would be.
func replicas(t *testing.T, n int) (*mongo.Database, []*mongostore.Repository) {
	t.Helper()
	db := client.Database(fmt.Sprintf("test%d", dbCount.Add(1)))
	t.Cleanup(func() { _ = db.Drop(context.Background()) })
	var out []*mongostore.Repository
	for range n {
		r := mongostore.New(db)
		if err := r.EnsureIndexes(context.Background()); err != nil {
			t.Fatal(err)
		}
		out = append(out, r)
	}
	return db, out
}

func campus(id, name, state string) *domain.Workspace {
	return domain.UnmarshalWorkspaceFromDatabase(domain.StoredWorkspace{ID: id, Name: name, Type: domain.TypeCampus,
		Address: domain.Address{State: state, Country: "US"}, Managers: []string{"root"}, CreatedAt: time.Now(), UpdatedAt: time.Now()})
}

// change applies f to workspace id as read from r and writes it, retrying
// when another writer moved the revision first. A change that does not
// apply (renaming or deleting a deleted workspace, undeleting an active
// one) is no write and no error.
func change(ctx context.Context, r *mongostore.Repository, id string, f func(w *domain.Workspace) error) error {
	for {
		w, err := r.Get(ctx, id)
		if err != nil {
			return err
		}
		if err := f(w); errors.Is(err, domain.ErrDeleted) || errors.Is(err, errNoChange) {
			return nil
		} else if err != nil {
			return err
		}
		_, err = r.Update(ctx, w)
		if !errors.Is(err, domain.ErrRevisionChanged) {
			return err
		}
	}
}

func rename(name string) func(*domain.Workspace) error {
	return func(w *domain.Workspace) error { return w.Update(domain.Changes{Name: &name}, time.Now()) }
}

func softDelete(w *domain.Workspace) error { return w.Delete(time.Now()) }

func undelete(w *domain.Workspace) error {
	if !w.Undelete(time.Now()) {
		return errNoChange
	}
	return nil
}

var errNoChange = errors.New("nothing to change")

// listAll pages through everything root sees with the search and states,
// pageSize at a time, as "nameKey NUL id" strings.
func listAll(t *testing.T, r *mongostore.Repository, search string, states []string, pageSize int) []string {
	t.Helper()
	var out []string
	q := domain.ListQuery{VisibleTo: "root", NameContains: search, States: states, Limit: pageSize}
	for {
		ws, err := r.List(context.Background(), q)
		if err != nil {
			t.Fatal(err)
		}
		for _, w := range ws {
			out = append(out, domain.NameKey(w.Name())+"\x00"+w.ID())
		}
		if len(ws) < pageSize {
			return out
		}
		last := ws[len(ws)-1]
		q.After = &domain.ListPosition{NameKey: domain.NameKey(last.Name()), ID: last.ID()}
	}
}

// truth is what root's list must hold: every active workspace, read one by
// one, filtered and sorted as lists are.
func truth(t *testing.T, r *mongostore.Repository, ids []string, search string, states []string) []string {
	t.Helper()
	var out []string
	for _, id := range ids {
		w, err := r.Get(context.Background(), id)
		if err != nil {
			t.Fatal(err)
		}
		if !w.DeletedAt().IsZero() || !strings.Contains(domain.NameKey(w.Name()), search) ||
			(len(states) > 0 && !slices.Contains(states, w.Address().State)) {
			continue
		}
		out = append(out, domain.NameKey(w.Name())+"\x00"+w.ID())
	}
	slices.Sort(out) // names and ids hold no control characters: as (nameKey, id)
	return out
}

func sameList(t *testing.T, what string, got, want []string) {
	t.Helper()
	if !slices.Equal(got, want) {
		t.Fatalf("%s: list has %d, truth %d\n got %q\nwant %q", what, len(got), len(want), got, want)
	}
}

// Creates, renames, deletes and undeletes on two replicas while both
// compact over and over: every acknowledged write shows in the next list
// of either replica, and once the writes stop the lists equal the truth,
// before and after a last compaction.
func TestCompactionRacingWithWrites(t *testing.T) {
	_, rs := replicas(t, 2)
	ctx := context.Background()
	const writers, perWriter = 4, 30
	var (
		mu  sync.Mutex
		ids []string
	)
	stop := make(chan struct{})
	var compactors sync.WaitGroup
	for _, r := range rs {
		compactors.Go(func() {
			for {
				select {
				case <-stop:
					return
				default:
				}
				if _, err := mongostore.CompactListsNow(ctx, r); err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	var wg sync.WaitGroup
	for w := range writers {
		wg.Go(func() {
			// Each writer changes only its own workspaces, so it knows
			// what the next list must show; the writers and compactions
			// run concurrently.
			rnd := rand.New(rand.NewPCG(uint64(w), 1))
			r, other := rs[w%2], rs[(w+1)%2]
			var mine []string
			listed := func(name, id string) bool {
				got := listAll(t, other, domain.NameKey(name), nil, 1000)
				return slices.Contains(got, domain.NameKey(name)+"\x00"+id)
			}
			for i := range perWriter {
				id := fmt.Sprintf("w%d-%02d", w, i)
				name := fmt.Sprintf("School %d %02d", w, i)
				if err := r.Create(ctx, campus(id, name, []string{"US-CA", "US-IL"}[i%2])); err != nil {
					t.Error(err)
					return
				}
				mine = append(mine, id)
				mu.Lock()
				ids = append(ids, id)
				mu.Unlock()
				if !listed(name, id) {
					t.Errorf("%s not listed by the other replica right after its create", id)
					return
				}
				target := mine[rnd.IntN(len(mine))]
				var err error
				switch rnd.IntN(4) {
				case 0, 1:
					renamed := fmt.Sprintf("Renamed %d %02d", w, i)
					if err = change(ctx, r, target, rename(renamed)); err == nil {
						if got, _ := r.Get(ctx, target); got.DeletedAt().IsZero() && !listed(renamed, target) {
							t.Errorf("%s not listed under its new name by the other replica", target)
							return
						}
					}
				case 2:
					if err = change(ctx, r, target, softDelete); err == nil {
						got := listAll(t, other, "", nil, 1000)
						if slices.ContainsFunc(got, func(s string) bool { return strings.HasSuffix(s, "\x00"+target) }) {
							t.Errorf("deleted %s still listed by the other replica", target)
							return
						}
					}
				case 3:
					if err = change(ctx, r, target, undelete); err == nil {
						if got, _ := r.Get(ctx, target); !listed(got.Name(), target) {
							t.Errorf("undeleted %s not listed by the other replica", target)
							return
						}
					}
				}
				if err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
	close(stop)
	compactors.Wait()
	if t.Failed() {
		return
	}
	for _, q := range []struct {
		search string
		states []string
	}{{"", nil}, {"renamed", nil}, {"school 1", nil}, {"", []string{"US-CA"}}} {
		want := truth(t, rs[0], ids, q.search, q.states)
		for i, r := range rs {
			sameList(t, fmt.Sprintf("replica %d, search %q, states %v", i, q.search, q.states), listAll(t, r, q.search, q.states, 7), want)
		}
	}
	if _, err := mongostore.CompactListsNow(ctx, rs[1]); err != nil {
		t.Fatal(err)
	}
	sameList(t, "after a last compaction", listAll(t, rs[0], "", nil, 1000), truth(t, rs[0], ids, "", nil))
}

// A compaction that stops at any step, as a crash would, leaves lists
// right, and the next compaction finishes the work: a generation the
// pointer never named is never read, folded changes left in the log merge
// by revision.
func TestCompactionCrashPoints(t *testing.T) {
	for _, step := range []string{"written", "flipped", "folded"} {
		t.Run(step, func(t *testing.T) {
			db, rs := replicas(t, 2)
			r, other := rs[0], rs[1]
			ctx := context.Background()
			var ids []string
			write := func(from, to int) {
				t.Helper()
				for i := from; i < to; i++ {
					id := fmt.Sprintf("w%03d", i)
					if err := r.Create(ctx, campus(id, fmt.Sprintf("School %03d", i), "US-CA")); err != nil {
						t.Fatal(err)
					}
					ids = append(ids, id)
				}
			}
			write(0, 600)
			if err := change(ctx, r, "w001", rename("Renamed")); err != nil {
				t.Fatal(err)
			}
			if err := change(ctx, r, "w002", softDelete); err != nil {
				t.Fatal(err)
			}
			crash := errors.New("crash")
			mongostore.StopCompactionAt(r, step, crash)
			if _, err := r.CompactLists(ctx); !errors.Is(err, crash) {
				t.Fatalf("compaction stopped at %s: %v", step, err)
			}
			mongostore.StopCompactionAt(r, "", nil)
			for i, rep := range rs {
				sameList(t, fmt.Sprintf("replica %d after a crash at %s", i, step), listAll(t, rep, "", nil, 250), truth(t, r, ids, "", nil))
			}
			// Writes after the crash, then compactions by the other
			// replica, as the next holder of the lease would.
			write(600, 700)
			if err := change(ctx, r, "w003", rename("Renamed too")); err != nil {
				t.Fatal(err)
			}
			expireLease(t, db)
			if _, err := mongostore.CompactListsNow(ctx, other); err != nil {
				t.Fatal(err)
			}
			for i, rep := range rs {
				sameList(t, fmt.Sprintf("replica %d after the next compaction", i), listAll(t, rep, "", nil, 250), truth(t, r, ids, "", nil))
			}
			if n, err := db.Collection(mongostore.ListChangesCollection).CountDocuments(ctx, bson.D{}); err != nil || n != 0 {
				t.Fatalf("changes left after the next compaction: %d, %v", n, err)
			}
		})
	}
}

// expireLease ends whatever holds the compaction's lease, as its holder's
// time running out would.
func expireLease(t *testing.T, db *mongo.Database) {
	t.Helper()
	if _, err := db.Collection(mongostore.StoreMetaCollection).UpdateOne(context.Background(),
		bson.D{{Key: "_id", Value: "list_compaction"}},
		bson.D{{Key: "$set", Value: bson.D{{Key: "until", Value: time.Now().Add(-time.Second)}}}}); err != nil {
		t.Fatal(err)
	}
}

// The compaction's lease keeps a second replica from compacting while the
// first holds it, and passes on once the holder's time is up.
func TestCompactionLease(t *testing.T) {
	db, rs := replicas(t, 2)
	ctx := context.Background()
	for i := range 600 {
		if err := rs[0].Create(ctx, campus(fmt.Sprintf("w%03d", i), "School", "US-CA")); err != nil {
			t.Fatal(err)
		}
	}
	changes := db.Collection(mongostore.ListChangesCollection)
	meta := db.Collection(mongostore.StoreMetaCollection)
	if _, err := meta.InsertOne(ctx, bson.D{{Key: "_id", Value: "list_compaction"}, {Key: "holder", Value: "someone"},
		{Key: "until", Value: time.Now().Add(time.Minute)}}); err != nil {
		t.Fatal(err)
	}
	if _, err := rs[1].CompactLists(ctx); err != nil {
		t.Fatal(err)
	}
	if n, _ := changes.CountDocuments(ctx, bson.D{}); n != 600 {
		t.Fatalf("changes after a compaction while another holds the lease: %d, want 600", n)
	}
	expireLease(t, db)
	if _, err := rs[1].CompactLists(ctx); err != nil {
		t.Fatal(err)
	}
	if n, _ := changes.CountDocuments(ctx, bson.D{}); n != 0 {
		t.Fatalf("changes after the lease ran out: %d, want 0", n)
	}
	if n, _ := meta.CountDocuments(ctx, bson.D{{Key: "_id", Value: "list_compaction"}}); n != 0 {
		t.Fatalf("the lease stays after the compaction: %d", n)
	}
}

// Chunks no pointer names any more (a generation written by a compaction
// that stopped before moving the pointer, as a crash would) are swept by
// a later compaction; only the current generation and the one before stay.
func TestOrphanedGenerationsAreSwept(t *testing.T) {
	db, rs := replicas(t, 1)
	r := rs[0]
	ctx := context.Background()
	create := func(i int) {
		t.Helper()
		if err := r.Create(ctx, campus(fmt.Sprintf("w%03d", i), fmt.Sprintf("School %03d", i), "US-CA")); err != nil {
			t.Fatal(err)
		}
	}
	create(0)
	crash := errors.New("crash")
	mongostore.StopCompactionAt(r, "written", crash)
	if _, err := mongostore.CompactListsNow(ctx, r); !errors.Is(err, crash) {
		t.Fatalf("compaction stopped after writing its chunks: %v", err)
	}
	mongostore.StopCompactionAt(r, "", nil)
	chunks := db.Collection(mongostore.ListChunksCollection)
	var pointer struct {
		Gen        string `bson:"gen"`
		Chunks     int    `bson:"chunks"`
		PrevGen    string `bson:"prevGen"`
		PrevChunks int    `bson:"prevChunks"`
		Seq        int64  `bson:"seq"`
	}
	for i := 1; pointer.Seq < 16; i++ {
		create(i)
		expireLease(t, db)
		if _, err := mongostore.CompactListsNow(ctx, r); err != nil {
			t.Fatal(err)
		}
		if err := db.Collection(mongostore.StoreMetaCollection).FindOne(ctx, bson.D{{Key: "_id", Value: "list_snapshot"}}).Decode(&pointer); err != nil {
			t.Fatal(err)
		}
	}
	var left []struct {
		ID string `bson:"_id"`
	}
	cur, err := chunks.Find(ctx, bson.D{})
	if err != nil {
		t.Fatal(err)
	}
	if err := cur.All(ctx, &left); err != nil {
		t.Fatal(err)
	}
	var want []string
	for k := range pointer.Chunks {
		want = append(want, fmt.Sprintf("%s/%d", pointer.Gen, k))
	}
	for k := range pointer.PrevChunks {
		want = append(want, fmt.Sprintf("%s/%d", pointer.PrevGen, k))
	}
	var got []string
	for _, c := range left {
		got = append(got, c.ID)
	}
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Fatalf("chunks after generation %d: %v, want those of the last two generations %v", pointer.Seq, got, want)
	}
	if got := listAll(t, r, "", nil, 100); len(got) != int(pointer.Seq) {
		t.Fatalf("list after the sweep: %d workspaces, want %d", len(got), pointer.Seq)
	}
}
