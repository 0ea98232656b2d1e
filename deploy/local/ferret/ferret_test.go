package ferret

import (
	"context"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
)

func TestStopRestartKeepsData(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()

	srv, err := Start(ctx, Options{Dir: t.TempDir()})
	if err != nil {
		t.Fatalf("Start: %v", err)
	}
	t.Cleanup(func() {
		if err := srv.Stop(); err != nil {
			t.Errorf("Stop: %v", err)
		}
	})

	addr := srv.Addr()
	if addr == "" || addr == defaultAddr {
		t.Fatalf("Addr() = %q, want a resolved address", addr)
	}

	client, err := mongo.Connect(options.Client().ApplyURI(srv.URI()).SetServerSelectionTimeout(5 * time.Second))
	if err != nil {
		t.Fatalf("Connect: %v", err)
	}
	t.Cleanup(func() { _ = client.Disconnect(context.Background()) })

	coll := client.Database("test").Collection("docs")
	if _, err := coll.InsertOne(ctx, bson.D{{Key: "_id", Value: "a"}, {Key: "n", Value: 42}}); err != nil {
		t.Fatalf("InsertOne: %v", err)
	}

	assertDoc(ctx, t, coll)

	if err := srv.Stop(); err != nil {
		t.Fatalf("Stop: %v", err)
	}

	pingCtx, pingCancel := context.WithTimeout(ctx, time.Second)
	err = client.Ping(pingCtx, nil)
	pingCancel()
	if err == nil {
		t.Fatal("Ping after Stop succeeded, want an error")
	}

	if err := srv.Restart(ctx); err != nil {
		t.Fatalf("Restart: %v", err)
	}

	if got := srv.Addr(); got != addr {
		t.Fatalf("Addr() after Restart = %q, want %q", got, addr)
	}

	assertDoc(ctx, t, coll)
}

func TestStartRequiresDir(t *testing.T) {
	if _, err := Start(context.Background(), Options{}); err == nil {
		t.Fatal("Start without Dir succeeded, want an error")
	}
}

// assertDoc checks that the document inserted by the test can be found.
func assertDoc(ctx context.Context, t *testing.T, coll *mongo.Collection) {
	t.Helper()

	var got struct {
		ID string `bson:"_id"`
		N  int    `bson:"n"`
	}
	if err := coll.FindOne(ctx, bson.D{{Key: "_id", Value: "a"}}).Decode(&got); err != nil {
		t.Fatalf("FindOne: %v", err)
	}

	if got.ID != "a" || got.N != 42 {
		t.Fatalf("FindOne = %+v, want {ID:a N:42}", got)
	}
}
