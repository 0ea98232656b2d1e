package mongostore

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
)

// The list snapshot (see list_entries_mongo.go): every workspace's entry,
// packed into a few large documents of list_chunks, and the pointer to the
// current generation in store_meta.
//
// A generation is written whole before the pointer names it, and its
// chunks are never written again (their _id holds a random part), so a
// list that read the pointer reads a complete, unchanging snapshot, and a
// process keeps the one it read last in memory until the pointer moves.
//
// Compaction (CompactLists) folds changes into a new generation: it reads
// some changes, merges them over the current snapshot, writes the new
// generation's chunks, moves the pointer from the generation it read (a
// filter on it: one compaction of several racing wins, on MongoDB
// atomically), then deletes the changes it folded and the generation
// before last. A crash at any step leaves lists correct: a generation the
// pointer never named is never read (its chunks are swept later), and a
// change folded but not yet deleted merges with the snapshot by revision.
// Replicas take turns by a lease in store_meta, so the race is rare.
//
// A list reads the changes first and the pointer after: a change gone from
// the log was folded into the generation the pointer names by then (or an
// earlier one, which later ones include).
const ListChunksCollection = "list_chunks"

const (
	// snapshotPointer and compactionLease are store_meta documents.
	snapshotPointer = "list_snapshot"
	compactionLease = "list_compaction"
	// chunkSep separates the entries packed in a chunk.
	chunkSep = "\x1e"
	// chunkBytes bounds a chunk's entries, well under the 16 MiB document
	// limit.
	chunkBytes = 1 << 20
	// compactMin is how many changes make a compaction due at once;
	// fewer are folded once the snapshot is compactAge old. A list reads
	// every change, so this bounds what each list reads beyond the
	// snapshot (about 35 µs a change on the embedded store).
	compactMin = 500
	compactAge = time.Minute
	// compactMax bounds the changes one compaction folds (deleting them
	// reads the whole log once on the embedded store); a backlog takes
	// several compactions in a row.
	compactMax = 5000
	// leaseFor is how long a compaction's lease holds; compactTimeout,
	// well within it, bounds the compaction, so a holder that is slow
	// stops writing before another may take over.
	leaseFor       = 2 * time.Minute
	compactTimeout = time.Minute
	// sweepEvery: every sweepEvery-th generation also sweeps the chunks
	// of generations no pointer names any more (left by a crash).
	sweepEvery = 16
)

type pointerDoc struct {
	ID          string    `bson:"_id"`
	Gen         string    `bson:"gen"`
	Seq         int64     `bson:"seq"`
	Chunks      int       `bson:"chunks"`
	PrevGen     string    `bson:"prevGen"`
	PrevChunks  int       `bson:"prevChunks"`
	CompactedAt time.Time `bson:"compactedAt"`
}

type chunkDoc struct {
	ID      string `bson:"_id"`
	Seq     int64  `bson:"seq"`
	Entries string `bson:"entries"`
}

type leaseDoc struct {
	ID     string    `bson:"_id"`
	Holder string    `bson:"holder"`
	Until  time.Time `bson:"until"`
}

func chunkID(gen string, k int) string { return fmt.Sprintf("%s/%d", gen, k) }

// snapshot is one generation's entries in list order, tombstones included.
type snapshot struct {
	gen     string
	entries []entryFields
	revs    map[string]int64 // by workspace id
}

func newSnapshot(gen string, entries []entryFields) *snapshot {
	s := &snapshot{gen: gen, entries: entries, revs: make(map[string]int64, len(entries))}
	for _, e := range entries {
		s.revs[e.ID] = e.Revision
	}
	return s
}

// errNoSnapshot: the store has no snapshot yet (EnsureIndexes builds it).
var errNoSnapshot = errors.New("no list snapshot")

// errGenerationGone: the generation read was deleted meanwhile.
var errGenerationGone = errors.New("list snapshot generation deleted")

func (r *Repository) readPointer(ctx context.Context) (pointerDoc, error) {
	var p pointerDoc
	err := r.do(ctx, func(ctx context.Context) error {
		return r.meta.FindOne(ctx, bson.D{{Key: "_id", Value: snapshotPointer}}).Decode(&p)
	})
	if errors.Is(err, mongo.ErrNoDocuments) {
		return p, errNoSnapshot
	}
	if err != nil {
		return p, storeError("read the list snapshot's pointer", err)
	}
	return p, nil
}

// loadSnapshot returns the generation p names, from memory when this
// process read it last.
func (r *Repository) loadSnapshot(ctx context.Context, p pointerDoc) (*snapshot, error) {
	if s := r.snap.Load(); s != nil && s.gen == p.Gen {
		return s, nil
	}
	texts := make([]string, p.Chunks)
	errs := make([]error, p.Chunks)
	var wg sync.WaitGroup
	for k := range p.Chunks {
		wg.Go(func() {
			var c chunkDoc
			err := r.do(ctx, func(ctx context.Context) error {
				return r.chunks.FindOne(ctx, bson.D{{Key: "_id", Value: chunkID(p.Gen, k)}}).Decode(&c)
			})
			switch {
			case errors.Is(err, mongo.ErrNoDocuments):
				errs[k] = errGenerationGone
			case err != nil:
				errs[k] = storeError("read a list snapshot chunk", err)
			default:
				texts[k] = c.Entries
			}
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		if slices.ContainsFunc(errs, func(err error) bool { return errors.Is(err, errGenerationGone) }) {
			return nil, errGenerationGone
		}
		return nil, err
	}
	var entries []entryFields
	for _, t := range texts {
		if t == "" {
			continue
		}
		for e := range strings.SplitSeq(t, chunkSep) {
			entries = append(entries, unpackEntry(e))
		}
	}
	slices.SortFunc(entries, compareEntries) // written sorted; this only guards
	s := newSnapshot(p.Gen, entries)
	r.snap.Store(s)
	return s, nil
}

// readListView reads the changes, then the snapshot the pointer names
// (see above for why in this order).
func (r *Repository) readListView(ctx context.Context) (*listView, error) {
	changes, err := r.readChanges(ctx, 0)
	if err != nil {
		return nil, err
	}
	const attempts = 5
	for range attempts {
		p, err := r.readPointer(ctx)
		if err != nil {
			return nil, err
		}
		snap, err := r.loadSnapshot(ctx, p)
		if errors.Is(err, errGenerationGone) {
			continue // two compactions since the pointer was read
		}
		if err != nil {
			return nil, err
		}
		return merge(snap, changes), nil
	}
	return nil, storeError("read the list snapshot", errGenerationGone)
}

// writeGeneration writes entries as the chunks of a new generation of
// sequence number seq, returning it as a pointer (not yet stored).
func (r *Repository) writeGeneration(ctx context.Context, seq int64, entries []entryFields, prev pointerDoc) (pointerDoc, error) {
	p := pointerDoc{ID: snapshotPointer, Gen: fmt.Sprintf("%d-%s", seq, randomHex()), Seq: seq,
		PrevGen: prev.Gen, PrevChunks: prev.Chunks, CompactedAt: r.now().UTC()}
	var b strings.Builder
	flush := func() error {
		doc := chunkDoc{ID: chunkID(p.Gen, p.Chunks), Seq: seq, Entries: b.String()}
		err := r.do(ctx, func(ctx context.Context) error {
			_, err := r.chunks.InsertOne(ctx, doc)
			return err
		})
		if err != nil {
			return storeError("write a list snapshot chunk", err)
		}
		p.Chunks++
		b.Reset()
		return nil
	}
	for _, e := range entries {
		packed := packFields(e)
		if b.Len() > 0 && b.Len()+len(packed) >= chunkBytes {
			if err := flush(); err != nil {
				return p, err
			}
		}
		if b.Len() > 0 {
			b.WriteString(chunkSep)
		}
		b.WriteString(packed)
	}
	if b.Len() > 0 || p.Chunks == 0 {
		if err := flush(); err != nil {
			return p, err
		}
	}
	return p, nil
}

// packFields is packEntry for an unpacked entry.
func packFields(e entryFields) string {
	parts := append([]string{e.NameKey, e.ID, e.State, strconv.FormatInt(e.Revision, 10)}, e.VisibleTo...)
	return strings.Join(parts, entrySep)
}

// deleteGeneration removes the chunks of generation gen.
func (r *Repository) deleteGeneration(ctx context.Context, gen string, chunks int) error {
	for k := range chunks {
		err := r.do(ctx, func(ctx context.Context) error {
			_, err := r.chunks.DeleteOne(ctx, bson.D{{Key: "_id", Value: chunkID(gen, k)}})
			return err
		})
		if err != nil {
			return storeError("delete a list snapshot chunk", err)
		}
	}
	return nil
}

// buildSnapshot writes the first snapshot from the workspaces, once per
// store: for stores written before snapshots existed, and new ones. Lists
// read the workspaces themselves until then.
func (r *Repository) buildSnapshot(ctx context.Context) error {
	_, err := r.readPointer(ctx)
	if err == nil {
		r.entriesReady.Store(true)
		return nil
	}
	if !errors.Is(err, errNoSnapshot) {
		return err
	}
	// Writes meanwhile log their changes, which lists merge over this.
	var docs []workspaceDoc
	err = r.do(ctx, func(ctx context.Context) error {
		cur, err := r.workspaces.Find(ctx, bson.D{},
			options.Find().SetProjection(bson.D{{Key: "outbox", Value: 0}, {Key: "keys", Value: 0}}))
		if err != nil {
			return err
		}
		return cur.All(ctx, &docs)
	})
	if err != nil {
		return storeError("read workspaces for the list snapshot", err)
	}
	entries := make([]entryFields, len(docs))
	for i := range docs {
		entries[i] = unpackEntry(packEntry(&docs[i]))
	}
	slices.SortFunc(entries, compareEntries)
	p, err := r.writeGeneration(ctx, 1, entries, pointerDoc{})
	if err != nil {
		return err
	}
	err = r.do(ctx, func(ctx context.Context) error {
		_, err := r.meta.InsertOne(ctx, p)
		return err
	})
	switch {
	case mongo.IsDuplicateKeyError(err):
		// Another replica built one first: ours is never read.
		if err := r.deleteGeneration(ctx, p.Gen, p.Chunks); err != nil {
			return err
		}
	case err != nil:
		return storeError("write the list snapshot's pointer", err)
	default:
		r.snap.Store(newSnapshot(p.Gen, entries))
	}
	r.entriesReady.Store(true)
	return nil
}

// CompactLists folds logged changes into a new snapshot generation when
// enough are pending or the snapshot is old, unless another replica holds
// the compaction's lease. It reports whether it folded a full batch
// (more may be pending).
func (r *Repository) CompactLists(ctx context.Context) (more bool, err error) {
	return r.compactLists(ctx, false)
}

// compactLists is CompactLists; with force, any pending change is due.
func (r *Repository) compactLists(ctx context.Context, force bool) (more bool, err error) {
	ctx, cancel := context.WithTimeout(ctx, compactTimeout)
	defer cancel()
	changes, err := r.readChanges(ctx, compactMax)
	if err != nil || len(changes) == 0 {
		return false, err
	}
	p, err := r.readPointer(ctx)
	if errors.Is(err, errNoSnapshot) {
		return false, nil // EnsureIndexes builds the first one
	}
	if err != nil {
		return false, err
	}
	if !force && len(changes) < compactMin && r.now().Before(p.CompactedAt.Add(compactAge)) {
		return false, nil
	}
	release, held, err := r.takeLease(ctx)
	if err != nil || !held {
		return false, err
	}
	defer release()
	if err := r.compact(ctx, changes); err != nil {
		return false, err
	}
	return len(changes) == compactMax, nil
}

// compact folds changes into a new generation (see above). Changes read
// before the pointer are fine to fold: each is either still logged or
// folded into the generation read since.
func (r *Repository) compact(ctx context.Context, changes []changeDoc) error {
	p, err := r.readPointer(ctx)
	if err != nil {
		return err
	}
	snap, err := r.loadSnapshot(ctx, p)
	if err != nil {
		return err
	}
	entries := merge(snap, changes).all()
	next, err := r.writeGeneration(ctx, p.Seq+1, entries, p)
	if err != nil {
		return err
	}
	if err := r.step(stepWritten); err != nil {
		return err
	}
	var res *mongo.UpdateResult
	err = r.do(ctx, func(ctx context.Context) (err error) {
		res, err = r.meta.ReplaceOne(ctx, bson.D{{Key: "_id", Value: snapshotPointer}, {Key: "gen", Value: p.Gen}}, next)
		return err
	})
	if err != nil {
		return storeError("move the list snapshot's pointer", err)
	}
	if res.MatchedCount == 0 {
		// Another compaction moved it first: ours is never read.
		return r.deleteGeneration(ctx, next.Gen, next.Chunks)
	}
	r.snap.Store(newSnapshot(next.Gen, entries))
	if err := r.step(stepFlipped); err != nil {
		return err
	}
	ids := make(bson.A, len(changes))
	for i, c := range changes {
		ids[i] = c.ID
	}
	err = r.do(ctx, func(ctx context.Context) error {
		_, err := r.changes.DeleteMany(ctx, bson.D{{Key: "_id", Value: bson.D{{Key: "$in", Value: ids}}}})
		return err
	})
	if err != nil {
		return storeError("delete folded list changes", err)
	}
	if err := r.step(stepFolded); err != nil {
		return err
	}
	// The generation just replaced stays for lists that read its pointer a
	// moment ago; the one before goes.
	if err := r.deleteGeneration(ctx, p.PrevGen, p.PrevChunks); err != nil {
		return err
	}
	if next.Seq%sweepEvery == 0 {
		err = r.do(ctx, func(ctx context.Context) error {
			_, err := r.chunks.DeleteMany(ctx, bson.D{{Key: "seq", Value: bson.D{{Key: "$lt", Value: p.Seq}}}})
			return err
		})
		if err != nil {
			return storeError("sweep old list snapshot chunks", err)
		}
	}
	return nil
}

// Compaction steps, for tests that stop a compaction part way (as a crash
// would).
const (
	stepWritten = "written" // the new generation's chunks, not the pointer
	stepFlipped = "flipped" // the pointer, not the folded changes' removal
	stepFolded  = "folded"  // the folded changes' removal, not the old chunks'
)

// step ends a compaction at step s when a test asks it to.
func (r *Repository) step(s string) error {
	if r.stopAt == nil {
		return nil
	}
	return r.stopAt(s)
}

// takeLease takes the compaction's lease when nobody holds it or its
// holder's time is up.
func (r *Repository) takeLease(ctx context.Context) (release func(), held bool, err error) {
	now := r.now().UTC()
	mine := leaseDoc{ID: compactionLease, Holder: r.holder, Until: now.Add(leaseFor)}
	err = r.do(ctx, func(ctx context.Context) error {
		_, err := r.meta.InsertOne(ctx, mine)
		return err
	})
	if mongo.IsDuplicateKeyError(err) {
		var cur leaseDoc
		err = r.do(ctx, func(ctx context.Context) error {
			return r.meta.FindOne(ctx, bson.D{{Key: "_id", Value: compactionLease}}).Decode(&cur)
		})
		switch {
		case errors.Is(err, mongo.ErrNoDocuments):
			return nil, false, nil // released meanwhile; the next pass takes it
		case err != nil:
			return nil, false, storeError("read the list compaction's lease", err)
		case cur.Until.After(now):
			return nil, false, nil
		}
		var res *mongo.UpdateResult
		err = r.do(ctx, func(ctx context.Context) (err error) {
			res, err = r.meta.ReplaceOne(ctx, bson.D{{Key: "_id", Value: compactionLease}, {Key: "holder", Value: cur.Holder},
				{Key: "until", Value: cur.Until}}, mine)
			return err
		})
		if err == nil && res.MatchedCount == 0 {
			return nil, false, nil
		}
	}
	if err != nil {
		return nil, false, storeError("take the list compaction's lease", err)
	}
	return func() {
		ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), cleanupTimeout)
		defer cancel()
		_ = r.do(ctx, func(ctx context.Context) error {
			_, err := r.meta.DeleteOne(ctx, bson.D{{Key: "_id", Value: compactionLease}, {Key: "holder", Value: r.holder}})
			return err
		})
	}, true, nil
}

// RunListCompaction calls CompactLists every interval until ctx ends, and
// at once again while a backlog remains.
func (r *Repository) RunListCompaction(ctx context.Context, every time.Duration, logger *slog.Logger) {
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		more, err := r.CompactLists(ctx)
		if err != nil && ctx.Err() == nil {
			logger.Warn("the list compaction failed; it tries again", "error", err.Error(), "retry_in", every)
		}
		if more && err == nil {
			continue
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

func randomHex() string {
	b := make([]byte, 8)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}
