package main

import (
	"context"
	"fmt"
	"slices"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
)

// directBatch is how many workspaces one insertMany writes.
const directBatch = 1000

// seedDirect writes workspaces bench-<from+1> … bench-<to> straight into
// the store, as copies of the REST-created bench-000001 with a new id and
// name and no key pairs or codes. Creating 100,000 workspaces through the
// API takes hours on the embedded store (every create's writes slow down as
// the SQLite tables grow), so the large list is measured over copies; the
// list query cannot tell them from created workspaces.
func (e *env) seedDirect(ctx context.Context, from, to int) (time.Duration, error) {
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
	}
	return time.Since(start), nil
}

// copyOf is template as workspace number n.
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
		case "keys", "registrationCodes", "outbox":
			field.Value = bson.A{}
		case "visibleTo":
			visible := slices.Clone(field.Value.(bson.A))
			visible[0] = id
			field.Value = visible
		case "pendingSince":
			continue
		case "createFingerprint":
			field.Value = ""
		}
		out = append(out, field)
	}
	return out
}
