package main

import (
	"context"
	"fmt"
	"strconv"
	"strings"
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
// list query cannot tell them from created workspaces. It returns once the
// service has folded the copies' list changes into its snapshot (see
// mongostore), as it would have while they were created one by one.
func (e *env) seedDirect(ctx context.Context, from, to int) (time.Duration, error) {
	progress("  copying bench-000001 into workspaces %d to %d, %d per insert", from+1, to, directBatch)
	start := time.Now()
	client, err := mongo.Connect(options.Client().ApplyURI(e.stack.MongoURI).SetTimeout(5 * time.Minute))
	if err != nil {
		return 0, err
	}
	defer client.Disconnect(context.Background())
	coll := client.Database("workspaces").Collection("workspaces")
	// Lists read a snapshot of every workspace's entry and the changes
	// logged since (see mongostore), so each copy gets a change, as a
	// create logs one; the service's compaction folds them in.
	changes := client.Database("workspaces").Collection("list_changes")
	var template bson.D
	if err := coll.FindOne(ctx, bson.D{{Key: "_id", Value: "bench-000001"}}).Decode(&template); err != nil {
		return 0, fmt.Errorf("read the template workspace: %w", err)
	}
	for first := from + 1; first <= to; first += directBatch {
		docs := make([]any, 0, directBatch)
		changeDocs := make([]any, 0, directBatch)
		for n := first; n < first+directBatch && n <= to; n++ {
			doc := copyOf(template, n)
			docs = append(docs, doc)
			changeDocs = append(changeDocs, changeOf(doc))
		}
		if _, err := coll.InsertMany(ctx, docs); err != nil {
			return 0, fmt.Errorf("insert workspaces from %d: %w", first, err)
		}
		if _, err := changes.InsertMany(ctx, changeDocs); err != nil {
			return 0, fmt.Errorf("insert list changes from %d: %w", first, err)
		}
	}
	progress("  copied in %s; waiting for the service to fold the copies' list changes into its snapshot", time.Since(start).Round(time.Millisecond))
	for {
		n, err := changes.CountDocuments(ctx, bson.D{})
		if err != nil {
			return 0, fmt.Errorf("count list changes: %w", err)
		}
		if n < foldedBelow {
			break
		}
		select {
		case <-ctx.Done():
			return 0, ctx.Err()
		case <-time.After(2 * time.Second):
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
		case "keys", "registrationCodes":
			field.Value = bson.A{}
		case "createFingerprint":
			field.Value = ""
		}
		out = append(out, field)
	}
	return out
}

// foldedBelow: the copies count as folded once fewer changes than this
// wait (the service compacts at 500; creates keep logging new ones).
const foldedBelow = 500

// changeOf is the list change a create of workspace doc logs: its _id is
// "<id>@<revision>", its entry one string of nameKey, id, state, revision,
// then the workspace and its managers, separated by NUL (see mongostore).
func changeOf(doc bson.D) bson.D {
	var id, nameKey, state string
	var rev int64
	var managers []string
	for _, f := range doc {
		switch f.Key {
		case "_id":
			id = f.Value.(string)
		case "nameKey":
			nameKey = f.Value.(string)
		case "revision":
			rev, _ = f.Value.(int64)
		case "address":
			for _, a := range f.Value.(bson.D) {
				if a.Key == "state" {
					state, _ = a.Value.(string)
				}
			}
		case "managers":
			for _, m := range f.Value.(bson.A) {
				managers = append(managers, m.(string))
			}
		}
	}
	parts := append([]string{nameKey, id, state, strconv.FormatInt(rev, 10), id}, managers...)
	return bson.D{{Key: "_id", Value: fmt.Sprintf("%s@%d", id, rev)}, {Key: "entry", Value: strings.Join(parts, "\x00")}}
}
