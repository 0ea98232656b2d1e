package main

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
)

// directBatch is how many workspaces one insertMany writes.
const directBatch = 1000

// seedDirect writes the workspaces after the store's e.seeded, up to
// bench-<to>, straight into the store, as copies of the REST-created
// bench-000001 with a new id and name. Creating 100,000 workspaces through
// the API takes hours on the embedded store (every create reads the whole
// collection there), so the large list and the store-scale scenario's
// larger steps are measured over copies; no query of the store can tell
// them from created workspaces, and they are as large (see copyOf).
func (e *env) seedDirect(ctx context.Context, to int) (time.Duration, error) {
	from := e.seeded
	progress("  copying bench-000001 into workspaces %d to %d, %d per insert", from+1, to, directBatch)
	start := time.Now()
	client, err := mongo.Connect(options.Client().ApplyURI(e.stack.MongoURI).SetTimeout(5 * time.Minute))
	if err != nil {
		return 0, err
	}
	defer client.Disconnect(context.Background())
	coll := client.Database("workspaces").Collection("workspaces")
	var template bson.D
	if err := coll.FindOne(ctx, bson.D{{Key: "_id", Value: "bench-000001"}}).Decode(&template); err != nil {
		return 0, fmt.Errorf("read the template workspace: %w", err)
	}
	for first := from + 1; first <= to; first += directBatch {
		docs := make([]any, 0, directBatch)
		for n := first; n < first+directBatch && n <= to; n++ {
			docs = append(docs, copyOf(template, n))
		}
		if _, err := coll.InsertMany(ctx, docs); err != nil {
			return 0, fmt.Errorf("insert workspaces from %d: %w", first, err)
		}
		e.seeded = min(first+directBatch-1, to)
	}
	return time.Since(start), nil
}

// copyOf is template as workspace number n, with its outbox emptied (the
// relay's work is not the scenario's). It keeps the template's key pairs
// and registration codes, whose uniqueness lives in the reservation
// collections, not here: on the stand-in a query's cost grows with the
// bytes of every document it reads, so a copy must be as large as a
// created workspace. Its key pairs authenticate no one (the bench calls
// with the root pair), and a lookup by one of them finds some workspace
// that lists it, as it would find bench-000001.
func copyOf(template bson.D, n int) bson.D {
	id := fmt.Sprintf("bench-%06d", n)
	name := fmt.Sprintf("bench workspace %06d", n)
	out := make(bson.D, 0, len(template))
	for _, field := range template {
		switch field.Key {
		case "_id":
			field.Value = id
		case "name", "nameKey":
			field.Value = name
		case "address":
			if n%stateEvery == 0 {
				field.Value = bson.D{{Key: "city", Value: "Springfield"}, {Key: "state", Value: "US-CA"}, {Key: "country", Value: "US"}}
			}
		case "outbox":
			field.Value = bson.A{}
		case "visibleTo":
			visible := slices.Clone(field.Value.(bson.A))
			visible[0] = id
			field.Value = visible
		case "pendingSince":
			continue
		case "createFingerprint":
			// As long as a real one, and matching no create request.
			field.Value = strings.Repeat("0", len(field.Value.(string)))
		}
		out = append(out, field)
	}
	return out
}
