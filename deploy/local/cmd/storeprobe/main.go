// Command storeprobe times each query shape the workspace store uses on the
// embedded MongoDB stand-in (FerretDB v1.24 on SQLite, started by
// pkg/testenv as the tests and `make run` start it) at 1,000, 10,000 and
// 50,000 workspace documents, so that what the stand-in reads per query
// can be seen: a shape that reads every document grows with the
// collection, an index seek does not. The documents are shaped like the
// store's (two key pairs, an empty outbox) and written straight in; list
// entries are the small documents lists selected by until a snapshot of
// packed entries (list_chunks) and a change log (list_changes) replaced
// them, which it times too. Figures are the stand-in's, on this machine:
// see bench/store-scale.md.
//
// Usage:
//
//	go run ./deploy/local/cmd/storeprobe [-sizes 1000,10000,50000] [-lists=false]
package main

import (
	"context"
	"crypto/rand"
	"flag"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/liveproctor/workspaces/pkg/testenv"
)

func main() {
	sizes := flag.String("sizes", "1000,10000,50000", "numbers of documents to time the shapes at, ascending")
	lists := flag.Bool("lists", true, "also time the list and relay shapes (minutes at 50,000: each reads every document)")
	flag.Parse()
	if err := run(*sizes, *lists); err != nil {
		fmt.Fprintln(os.Stderr, "storeprobe:", err)
		os.Exit(1)
	}
}

func run(sizeList string, lists bool) error {
	var sizes []int
	for _, s := range strings.Split(sizeList, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil || n < 1000 || n%1000 != 0 {
			return fmt.Errorf("bad size %q: want multiples of 1000", s)
		}
		sizes = append(sizes, n)
	}
	ctx := context.Background()
	dir, err := os.MkdirTemp("", "storeprobe-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	store, err := testenv.StartFerretDB(ctx, testenv.FerretDBOptions{Dir: dir})
	if err != nil {
		return err
	}
	defer store.Stop()
	c, err := mongo.Connect(options.Client().ApplyURI(store.URI()).SetTimeout(10 * time.Minute))
	if err != nil {
		return err
	}
	defer c.Disconnect(ctx)
	db := c.Database("probe")
	ws, en := db.Collection("workspaces"), db.Collection("list_entries")
	chunks, changes := db.Collection("list_chunks"), db.Collection("list_changes")
	// Create the collections, then give the ferretdb command a moment to
	// add its _id index, as it does within a second for a running service.
	if _, err := ws.InsertOne(ctx, workspaceDoc(0)); err != nil {
		return err
	}
	if _, err := en.InsertOne(ctx, entryDoc(0)); err != nil {
		return err
	}
	// A change log as lists find it between compactions: 500 changes.
	var changeDocs []any
	for n := range 500 {
		changeDocs = append(changeDocs, bson.D{{Key: "_id", Value: fmt.Sprintf("bench-%06d@2", n+1)}, {Key: "entry", Value: packed(n + 1)}})
	}
	if _, err := changes.InsertMany(ctx, changeDocs); err != nil {
		return err
	}
	if _, err := chunks.InsertOne(ctx, bson.D{{Key: "_id", Value: "probe/init"}}); err != nil {
		return err
	}
	time.Sleep(2 * time.Second)

	seeded := 0
	extra := 1_000_000 // ids of the timed inserts, past the seeded ones
	for _, size := range sizes {
		start := time.Now()
		for seeded < size {
			var wsDocs, entryDocs []any
			for range 1000 {
				seeded++
				wsDocs = append(wsDocs, workspaceDoc(seeded))
				entryDocs = append(entryDocs, entryDoc(seeded))
			}
			if _, err := ws.InsertMany(ctx, wsDocs); err != nil {
				return err
			}
			if _, err := en.InsertMany(ctx, entryDocs); err != nil {
				return err
			}
		}
		fmt.Printf("%d documents (written in %s)\n", size, time.Since(start).Round(time.Millisecond))
		chunkIDs, err := writeSnapshot(ctx, chunks, seeded)
		if err != nil {
			return err
		}
		mid := fmt.Sprintf("bench-%06d", size/2)
		shapes := []shape{
			{"findOne {_id} (workspaces)", 20, func() error { return ws.FindOne(ctx, bson.D{{Key: "_id", Value: mid}}).Err() }},
			{"findOne {_id} (list_entries)", 20, func() error { return en.FindOne(ctx, bson.D{{Key: "_id", Value: mid}}).Err() }},
			{"updateOne {_id}", 5, func() error {
				_, err := ws.UpdateOne(ctx, bson.D{{Key: "_id", Value: mid}}, bson.D{{Key: "$set", Value: bson.D{{Key: "supportToolId", Value: "y"}}}})
				return err
			}},
			{"updateOne {_id, revision} (Update)", 3, func() error {
				_, err := ws.UpdateOne(ctx, bson.D{{Key: "_id", Value: mid}, {Key: "revision", Value: int64(1)}},
					bson.D{{Key: "$set", Value: bson.D{{Key: "supportToolId", Value: "z"}}}})
				return err
			}},
			{"insertOne workspace", 5, func() error {
				extra++
				_, err := ws.InsertOne(ctx, workspaceDoc(extra))
				return err
			}},
			{"find {_id: {$in: 100 ids}}", 3, func() error {
				ids := bson.A{}
				for i := range 100 {
					ids = append(ids, fmt.Sprintf("bench-%06d", i+1))
				}
				return all(ctx, ws, bson.D{{Key: "_id", Value: bson.D{{Key: "$in", Value: ids}}}}, nil, 0)
			}},
		}
		if lists {
			search := bson.D{{Key: "$and", Value: bson.A{
				bson.D{{Key: "deletedAt", Value: nil}},
				bson.D{{Key: "$or", Value: bson.A{bson.D{{Key: "_id", Value: "root"}}, bson.D{{Key: "managers", Value: "root"}}}}},
				bson.D{{Key: "nameKey", Value: bson.D{{Key: "$regex", Value: "bench"}}}},
			}}}
			state := bson.D{{Key: "$and", Value: bson.A{
				bson.D{{Key: "deletedAt", Value: nil}},
				bson.D{{Key: "managers", Value: "root"}},
				bson.D{{Key: "address.state", Value: bson.D{{Key: "$in", Value: bson.A{"US-CA"}}}}},
			}}}
			order := bson.D{{Key: "nameKey", Value: 1}, {Key: "_id", Value: 1}}
			entrySearch := bson.D{{Key: "visibleTo", Value: "root"}, {Key: "nameKey", Value: bson.D{{Key: "$regex", Value: "bench"}}}}
			shapes = append(shapes,
				shape{"list: search, sorted, 101 (workspaces)", 2, func() error { return all(ctx, ws, search, order, 101) }},
				shape{"list: search, unsorted, 101 (workspaces)", 2, func() error { return all(ctx, ws, search, nil, 101) }},
				shape{"list: state, sorted, 101 (workspaces)", 2, func() error { return all(ctx, ws, state, order, 101) }},
				shape{"relay: outbox.0 $exists (workspaces)", 2, func() error {
					return all(ctx, ws, bson.D{{Key: "outbox.0", Value: bson.D{{Key: "$exists", Value: true}}}}, nil, 100)
				}},
				shape{"list: search, sorted, 101 (list_entries)", 2, func() error { return all(ctx, en, entrySearch, order, 101) }},
				shape{"list: search, unsorted, all (list_entries)", 2, func() error { return all(ctx, en, entrySearch, nil, 0) }},
				shape{"find {}, limit 1000 (a marker read, at its worst)", 5, func() error { return all(ctx, en, bson.D{}, nil, 1000) }},
			)
		}
		// What a list reads now: the snapshot's chunks by _id (only when
		// its generation changed since the process read it last) and the
		// whole change log.
		shapes = append(shapes,
			shape{fmt.Sprintf("snapshot: %d chunks by _id (%d entries)", len(chunkIDs), seeded), 5, func() error {
				for _, id := range chunkIDs {
					if err := chunks.FindOne(ctx, bson.D{{Key: "_id", Value: id}}).Err(); err != nil {
						return err
					}
				}
				return nil
			}},
			shape{"change log: find {} (500 changes)", 5, func() error { return all(ctx, changes, bson.D{}, nil, 0) }},
		)
		for _, s := range shapes {
			if err := s.time(); err != nil {
				return err
			}
		}
	}
	return nil
}

// shape is one query, timed reps times.
type shape struct {
	name string
	reps int
	call func() error
}

func (s shape) time() error {
	took := make([]time.Duration, s.reps)
	for i := range took {
		start := time.Now()
		if err := s.call(); err != nil {
			return fmt.Errorf("%s: %w", s.name, err)
		}
		took[i] = time.Since(start)
	}
	slices.Sort(took)
	fmt.Printf("  %-45s p50 %9.1f ms   max %9.1f ms   (%d runs)\n", s.name, ms(took[len(took)/2]), ms(took[len(took)-1]), s.reps)
	return nil
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// all reads what filter selects, in order when sorted, at most limit (0: all).
func all(ctx context.Context, c *mongo.Collection, filter, sort bson.D, limit int64) error {
	opts := options.Find()
	if sort != nil {
		opts.SetSort(sort)
	}
	if limit > 0 {
		opts.SetLimit(limit)
	}
	cur, err := c.Find(ctx, filter, opts)
	if err != nil {
		return err
	}
	var out []bson.Raw
	return cur.All(ctx, &out)
}

func random(n int) []byte {
	b := make([]byte, n)
	rand.Read(b)
	return b
}

// workspaceDoc is workspace number n, shaped as the store keeps one.
func workspaceDoc(n int) bson.D {
	id := fmt.Sprintf("bench-%06d", n)
	now := time.Now().UTC()
	key := func(role string) bson.D {
		return bson.D{{Key: "appKey", Value: fmt.Sprintf("%x", random(16))}, {Key: "sealedSecret", Value: random(64)},
			{Key: "secretDigest", Value: random(32)}, {Key: "role", Value: role}, {Key: "name", Value: ""},
			{Key: "tags", Value: bson.A{bson.D{{Key: "key", Value: "allow-rest-api-access"}, {Key: "type", Value: "string"}, {Key: "value", Value: "TRUE"}}}},
			{Key: "createdAt", Value: now}, {Key: "updatedAt", Value: now}, {Key: "expiresAt", Value: nil}}
	}
	return bson.D{{Key: "_id", Value: id}, {Key: "name", Value: "bench workspace " + id[6:]}, {Key: "nameKey", Value: "bench workspace " + id[6:]},
		{Key: "type", Value: "DISTRICT"}, {Key: "parentId", Value: nil},
		{Key: "address", Value: bson.D{{Key: "city", Value: "Springfield"}, {Key: "state", Value: state(n)}, {Key: "country", Value: "US"}}},
		{Key: "products", Value: bson.A{}}, {Key: "objectiveDocuments", Value: bson.A{}}, {Key: "rateLimit", Value: nil}, {Key: "tags", Value: bson.A{}},
		{Key: "supportToolId", Value: "x"}, {Key: "createdBy", Value: "root"}, {Key: "managers", Value: bson.A{"root"}},
		{Key: "keys", Value: bson.A{key("server"), key("lti")}}, {Key: "registrationCodes", Value: bson.A{"ABCD-EFGH"}},
		{Key: "createFingerprint", Value: fmt.Sprintf("%x", random(32))}, {Key: "schemaVersion", Value: "2026-11-22"},
		{Key: "createdAt", Value: now}, {Key: "updatedAt", Value: now}, {Key: "deletedAt", Value: nil}, {Key: "tokenCutoff", Value: nil},
		{Key: "revision", Value: int64(1)}, {Key: "outbox", Value: bson.A{}}}
}

// packed is workspace number n's list entry as lists store it now: one
// string of nameKey, id, state, revision, the workspace and its managers,
// separated by NUL.
func packed(n int) string {
	id := fmt.Sprintf("bench-%06d", n)
	return strings.Join([]string{"bench workspace " + id[6:], id, state(n), "1", id, "root"}, "\x00")
}

// writeSnapshot replaces the list snapshot's chunks with the entries of
// workspaces 1 to n, packed as the store packs them (entries separated by
// 0x1e, at most 1 MiB a chunk), and returns the chunks' ids.
func writeSnapshot(ctx context.Context, chunks *mongo.Collection, n int) ([]string, error) {
	if _, err := chunks.DeleteMany(ctx, bson.D{}); err != nil {
		return nil, err
	}
	var ids []string
	var b strings.Builder
	flush := func() error {
		id := fmt.Sprintf("probe/%d", len(ids))
		if _, err := chunks.InsertOne(ctx, bson.D{{Key: "_id", Value: id}, {Key: "seq", Value: int64(1)}, {Key: "entries", Value: b.String()}}); err != nil {
			return err
		}
		ids = append(ids, id)
		b.Reset()
		return nil
	}
	for i := 1; i <= n; i++ {
		e := packed(i)
		if b.Len() > 0 && b.Len()+len(e) >= 1<<20 {
			if err := flush(); err != nil {
				return nil, err
			}
		}
		if b.Len() > 0 {
			b.WriteString("\x1e")
		}
		b.WriteString(e)
	}
	return ids, flush()
}

// entryDoc is workspace number n's list entry, as a document of five
// fields (the layout of bench/store-scale.md's runs 3 and 4).
func entryDoc(n int) bson.D {
	id := fmt.Sprintf("bench-%06d", n)
	return bson.D{{Key: "_id", Value: id}, {Key: "visibleTo", Value: bson.A{id, "root"}}, {Key: "nameKey", Value: "bench workspace " + id[6:]},
		{Key: "state", Value: state(n)}, {Key: "revision", Value: int64(1)}}
}

// state puts one workspace in ten in US-CA, as the bench seeds them.
func state(n int) string {
	if n%10 == 0 {
		return "US-CA"
	}
	return "US-IL"
}
