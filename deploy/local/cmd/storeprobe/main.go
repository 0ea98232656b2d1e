// Command storeprobe times each query shape the workspace store
// (services/workspace/internal/adapters/mongostore) sends, on the embedded
// MongoDB stand-in (FerretDB v1.24 on SQLite, started by pkg/testenv as the
// tests and `make run` start it) at 1,000, 10,000 and 50,000 workspace
// documents, so that what the stand-in reads per query can be seen: a shape
// that reads every document grows with the collection, an index seek does
// not. The documents are shaped like the store's (two key pairs, visibleTo,
// an empty outbox), written straight in, with the adapter's indexes. The
// load benchmark's store-scale scenario (`-only store`) measures what these
// add up to through the gateway; this says which query a request's time
// goes to. Figures are the stand-in's, on this machine: see
// bench/store-scale.md.
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
	lists := flag.Bool("lists", true, "also time the list and background shapes (minutes at 50,000: each reads every document)")
	flag.Parse()
	if err := run(*sizes, *lists); err != nil {
		fmt.Fprintln(os.Stderr, "storeprobe:", err)
		os.Exit(1)
	}
}

// indexes are the adapter's on the workspaces collection (indexes_mongo.go),
// so that an insert maintains what it maintains in the service.
var indexes = []mongo.IndexModel{
	{Keys: bson.D{{Key: "visibleTo", Value: 1}, {Key: "deletedAt", Value: 1}, {Key: "nameKey", Value: 1}, {Key: "_id", Value: 1}, {Key: "address.state", Value: 1}},
		Options: options.Index().SetName("list")},
	{Keys: bson.D{{Key: "keys.appKey", Value: 1}}, Options: options.Index().SetName("app_key")},
	{Keys: bson.D{{Key: "keys.expiresAt", Value: 1}}, Options: options.Index().SetName("key_expiry")},
	{Keys: bson.D{{Key: "pendingSince", Value: 1}}, Options: options.Index().SetName("pending_events").SetSparse(true)},
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
	ws, appKeys := db.Collection("workspaces"), db.Collection("app_keys")
	// Create the collections and the adapter's indexes, then give the
	// ferretdb command a moment to add its _id index, as it does within a
	// second for a running service.
	if _, err := ws.InsertOne(ctx, workspaceDoc(0)); err != nil {
		return err
	}
	if _, err := ws.Indexes().CreateMany(ctx, indexes); err != nil {
		return err
	}
	if _, err := appKeys.InsertOne(ctx, bson.D{{Key: "_id", Value: "probe"}}); err != nil {
		return err
	}
	time.Sleep(2 * time.Second)

	seeded := 0
	extra := 1_000_000              // ids of the timed inserts, past the seeded ones
	revisions := map[string]int64{} // of the updated documents
	for _, size := range sizes {
		start := time.Now()
		for seeded < size {
			var docs []any
			for range 1000 {
				seeded++
				docs = append(docs, workspaceDoc(seeded))
			}
			if _, err := ws.InsertMany(ctx, docs); err != nil {
				return err
			}
		}
		fmt.Printf("%d documents (written in %s)\n", size, time.Since(start).Round(time.Millisecond))
		mid := fmt.Sprintf("bench-%06d", size/2)
		var midDoc struct {
			Keys []struct {
				AppKey string `bson:"appKey"`
			} `bson:"keys"`
		}
		if err := ws.FindOne(ctx, bson.D{{Key: "_id", Value: mid}}).Decode(&midDoc); err != nil {
			return err
		}
		midKey := midDoc.Keys[1].AppKey
		shapes := []shape{
			{"findOne {_id} (Get; a publish's read)", 20, func() error { return ws.FindOne(ctx, bson.D{{Key: "_id", Value: mid}}).Err() }},
			{"findOne {keys.appKey} (GetByAppKey)", 3, func() error {
				return ws.FindOne(ctx, bson.D{{Key: "keys.appKey", Value: midKey}}).Err()
			}},
			{"find {_id: {$in: 2 ids}} (a create's read)", 3, func() error {
				return all(ctx, ws, bson.D{{Key: "_id", Value: bson.D{{Key: "$in", Value: bson.A{mid, "bench-new"}}}}}, nil, 0)
			}},
		}
		// The stand-in's updateOne reads the documents in the order they
		// were written and stops at the first match, so where the document
		// sits decides what an update reads: it is timed at the first, the
		// middle and the last of them.
		for _, at := range []struct {
			name string
			n    int
		}{{"first", 1}, {"middle", size / 2}, {"last", size}} {
			id := fmt.Sprintf("bench-%06d", at.n)
			if revisions[id] == 0 {
				revisions[id] = 1
			}
			shapes = append(shapes, shape{fmt.Sprintf("updateOne {_id, revision}, the %s (Update)", at.name), 3, func() error {
				res, err := ws.UpdateOne(ctx, bson.D{{Key: "_id", Value: id}, {Key: "revision", Value: revisions[id]}},
					bson.D{{Key: "$set", Value: bson.D{{Key: "supportToolId", Value: "z"}}}, {Key: "$inc", Value: bson.D{{Key: "revision", Value: int64(1)}}}})
				if err == nil && res.MatchedCount != 1 {
					err = fmt.Errorf("matched %d", res.MatchedCount)
				}
				revisions[id]++
				return err
			}})
		}
		shapes = append(shapes, []shape{
			{"insertMany 2 reservations (app_keys)", 5, func() error {
				extra++
				_, err := appKeys.InsertMany(ctx, []any{
					bson.D{{Key: "_id", Value: fmt.Sprintf("key-%d-a", extra)}}, bson.D{{Key: "_id", Value: fmt.Sprintf("key-%d-b", extra)}}})
				return err
			}},
			{"insertOne workspace", 5, func() error {
				extra++
				_, err := ws.InsertOne(ctx, workspaceDoc(extra))
				return err
			}},
		}...)
		if lists {
			order := bson.D{{Key: "nameKey", Value: 1}, {Key: "_id", Value: 1}}
			visible := bson.D{{Key: "visibleTo", Value: "root"}, {Key: "deletedAt", Value: nil}}
			search := append(slices.Clone(visible), bson.E{Key: "nameKey", Value: bson.D{{Key: "$regex", Value: "bench"}}})
			state := append(slices.Clone(visible), bson.E{Key: "address.state", Value: bson.D{{Key: "$in", Value: bson.A{"US-CA"}}}})
			ids := func(field string, cond bson.D) func() error {
				return func() error {
					return all(ctx, ws, bson.D{{Key: field, Value: cond}}, bson.D{{Key: field, Value: 1}}, 100)
				}
			}
			shapes = append(shapes,
				shape{"list: search, sorted, 101", 2, func() error { return all(ctx, ws, search, order, 101) }},
				shape{"list: state, sorted, 101", 2, func() error { return all(ctx, ws, state, order, 101) }},
				shape{"relay: pendingSince $lt, sorted, 100", 2, ids("pendingSince", bson.D{{Key: "$lt", Value: time.Now().UTC()}})},
				shape{"sweeper: keys.expiresAt $lte, sorted, 100", 2, ids("keys.expiresAt", bson.D{{Key: "$lte", Value: time.Now().UTC()}})},
			)
		}
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
	fmt.Printf("  %-55s p50 %9.1f ms   max %9.1f ms   (%d runs)\n", s.name, ms(took[len(took)/2]), ms(took[len(took)-1]), s.reps)
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

// workspaceDoc is workspace number n, shaped as the store keeps one
// (mongostore's documents.go).
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
		{Key: "revision", Value: int64(1)}, {Key: "visibleTo", Value: bson.A{id, "root"}}, {Key: "outbox", Value: bson.A{}}}
}

// state puts one workspace in ten in US-CA, as the bench seeds them.
func state(n int) string {
	if n%10 == 0 {
		return "US-CA"
	}
	return "US-IL"
}
