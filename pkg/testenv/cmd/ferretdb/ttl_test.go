package main

import (
	"context"
	"errors"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
)

// ttlOf returns the expireAfterSeconds listIndexes shows for c's index
// name: nil when it has none.
func ttlOf(t *testing.T, c *mongo.Collection, name string) *int32 {
	t.Helper()
	specs, err := c.Indexes().ListSpecifications(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range specs {
		if s.Name == name {
			return s.ExpireAfterSeconds
		}
	}
	t.Fatalf("%s has no index %s", c.Name(), name)
	return nil
}

func wantTTL(t *testing.T, c *mongo.Collection, name string, want int32) {
	t.Helper()
	if got := ttlOf(t, c, name); got == nil || *got != want {
		t.Fatalf("%s.%s: expireAfterSeconds %v, want %d", c.Name(), name, got, want)
	}
}

func wantNoTTL(t *testing.T, c *mongo.Collection, name string) {
	t.Helper()
	if got := ttlOf(t, c, name); got != nil {
		t.Fatalf("%s.%s: expireAfterSeconds %d, want none", c.Name(), name, *got)
	}
}

func createIndex(c *mongo.Collection, name, field string, ttl *int32) error {
	opts := options.Index().SetName(name)
	if ttl != nil {
		opts.SetExpireAfterSeconds(*ttl)
	}
	_, err := c.Indexes().CreateOne(context.Background(), mongo.IndexModel{Keys: bson.D{{Key: field, Value: 1}}, Options: opts})
	return err
}

func seconds(s int32) *int32 { return &s }

// collMod sets index name's expireAfterSeconds, as mongostore's setTTL
// does, and returns the answer.
func collMod(c *mongo.Collection, name string, ttl any) (bson.M, error) {
	var res bson.M
	err := c.Database().RunCommand(context.Background(), bson.D{
		{Key: "collMod", Value: c.Name()},
		{Key: "index", Value: bson.D{{Key: "name", Value: name}, {Key: "expireAfterSeconds", Value: ttl}}},
	}).Decode(&res)
	return res, err
}

func wantCode(t *testing.T, what string, err error, code int32) {
	t.Helper()
	var ce mongo.CommandError
	if !errors.As(err, &ce) || ce.Code != code {
		t.Fatalf("%s: %v, want error code %d", what, err, code)
	}
}

// A TTL index created through the driver is listed with its
// expireAfterSeconds, collMod changes it as on MongoDB, and the monitor
// removes the documents whose date is past it: a date or an array holding
// one, not a value of another type nor a document without the field.
func TestTTLIndexExpiresDocuments(t *testing.T) {
	s := startStandIn(t, t.TempDir(), config{ttlEvery: 50 * time.Millisecond})
	c := connect(t, s.uri).Database("ttl").Collection("sessions")
	ctx := context.Background()
	if err := createIndex(c, "expiry", "at", seconds(7200)); err != nil {
		t.Fatal(err)
	}
	wantTTL(t, c, "expiry", 7200)
	res, err := collMod(c, "expiry", int32(600))
	if err != nil {
		t.Fatal(err)
	}
	if res["expireAfterSeconds_old"] != int32(7200) || res["expireAfterSeconds_new"] != int32(600) {
		t.Fatalf("collMod answered %v", res)
	}
	wantTTL(t, c, "expiry", 600)

	now := time.Now()
	_, err = c.InsertMany(ctx, []any{
		bson.D{{Key: "_id", Value: "old"}, {Key: "at", Value: now.Add(-time.Hour)}},
		bson.D{{Key: "_id", Value: "old in an array"}, {Key: "at", Value: bson.A{now, now.Add(-time.Hour)}}},
		bson.D{{Key: "_id", Value: "young"}, {Key: "at", Value: now}},
		bson.D{{Key: "_id", Value: "not a date"}, {Key: "at", Value: "long ago"}},
		bson.D{{Key: "_id", Value: "no date"}},
	})
	if err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the expired documents removed", func() (bool, error) {
		n, err := c.CountDocuments(ctx, bson.D{{Key: "_id", Value: bson.D{{Key: "$in", Value: bson.A{"old", "old in an array"}}}}})
		return n == 0, err
	})
	// The pass that removed them left these.
	if n, err := c.CountDocuments(ctx, bson.D{}); err != nil || n != 3 {
		t.Fatalf("%d documents left, %v; want young, not a date, no date", n, err)
	}
}

// What MongoDB refuses about TTL indexes, the stand-in refuses too.
func TestTTLIndexRefusals(t *testing.T) {
	s := startStandIn(t, t.TempDir(), config{})
	c := connect(t, s.uri).Database("ttl").Collection("things")
	ctx := context.Background()
	if err := createIndex(c, "expiry", "at", seconds(60)); err != nil {
		t.Fatal(err)
	}
	if err := createIndex(c, "expiry", "at", seconds(60)); err != nil {
		t.Fatalf("the same TTL index again: %v", err)
	}
	wantCode(t, "the index with another TTL", createIndex(c, "expiry", "at", seconds(61)), codeIndexOptionsConflict)
	wantCode(t, "the index without its TTL", createIndex(c, "expiry", "at", nil), codeIndexOptionsConflict)
	_, err := c.Indexes().CreateOne(ctx, mongo.IndexModel{Keys: bson.D{{Key: "a", Value: 1}, {Key: "b", Value: 1}},
		Options: options.Index().SetExpireAfterSeconds(60)})
	wantCode(t, "a compound TTL index", err, codeCannotCreateIndex)
	wantCode(t, "a negative TTL", createIndex(c, "later", "later", seconds(-1)), codeCannotCreateIndex)
	wantTTL(t, c, "expiry", 60)

	_, err = collMod(c, "missing", 60)
	wantCode(t, "collMod of a missing index", err, codeIndexNotFound)
	_, err = collMod(c.Database().Collection("missing"), "expiry", 60)
	wantCode(t, "collMod of a missing collection", err, codeNamespaceNotFound)
	_, err = collMod(c, "_id_", 60)
	wantCode(t, "collMod of the _id index", err, codeInvalidOptions)
	_, err = collMod(c, "expiry", "soon")
	wantCode(t, "collMod to a string", err, codeInvalidOptions)

	// An index without a TTL becomes one, as on MongoDB since 5.1.
	if err := createIndex(c, "plain", "seen", nil); err != nil {
		t.Fatal(err)
	}
	res, err := collMod(c, "plain", int64(30))
	if err != nil {
		t.Fatal(err)
	}
	if _, had := res["expireAfterSeconds_old"]; had || res["expireAfterSeconds_new"] != int32(30) {
		t.Fatalf("collMod of an index without a TTL answered %v", res)
	}
	wantTTL(t, c, "plain", 30)
}

// TTL indexes are kept in the data folder across a restart, and go with
// their index, collection or database; a renamed collection keeps its own.
func TestTTLIndexesOutliveRestartsAndGoWithTheirIndex(t *testing.T) {
	dir := t.TempDir()
	first := startStandIn(t, dir, config{})
	ctx := context.Background()
	client := connect(t, first.uri)
	for _, c := range []*mongo.Collection{
		client.Database("one").Collection("a"), client.Database("one").Collection("b"),
		client.Database("one").Collection("c"), client.Database("two").Collection("d"),
	} {
		if err := createIndex(c, "expiry", "at", seconds(60)); err != nil {
			t.Fatal(err)
		}
	}
	if err := first.stop(); err != nil {
		t.Fatal(err)
	}

	s := startStandIn(t, dir, config{})
	client = connect(t, s.uri)
	one, two := client.Database("one"), client.Database("two")
	wantTTL(t, one.Collection("a"), "expiry", 60)

	if err := one.Collection("a").Indexes().DropOne(ctx, "expiry"); err != nil {
		t.Fatal(err)
	}
	if err := one.Collection("b").Drop(ctx); err != nil {
		t.Fatal(err)
	}
	if err := two.Drop(ctx); err != nil {
		t.Fatal(err)
	}
	err := client.Database("admin").RunCommand(ctx, bson.D{{Key: "renameCollection", Value: "one.c"}, {Key: "to", Value: "one.e"}}).Err()
	if err != nil {
		t.Fatal(err)
	}
	wantTTL(t, one.Collection("e"), "expiry", 60)
	// The same index again, without a TTL, is not taken for the old one.
	for _, c := range []*mongo.Collection{one.Collection("a"), one.Collection("b"), one.Collection("c"), two.Collection("d")} {
		if err := createIndex(c, "expiry", "at", nil); err != nil {
			t.Fatalf("%s: %v", c.Name(), err)
		}
		wantNoTTL(t, c, "expiry")
	}
}
