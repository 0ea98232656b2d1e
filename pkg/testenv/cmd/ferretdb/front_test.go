package main

import (
	"context"
	"encoding/binary"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/url"
	"path/filepath"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
	"go.mongodb.org/mongo-driver/v2/mongo/writeconcern"
)

// Run `go test -run TestConditionalUpdatesHaveOneWinner -without-write-lock`
// to see the race the front's lock closes.
var withoutWriteLock = flag.Bool("without-write-lock", false, "run the front without its write lock")

// unlocked is a write lock that does not lock: FerretDB alone.
type unlocked struct{}

func (unlocked) Lock()   {}
func (unlocked) Unlock() {}

func writeLock() sync.Locker {
	if *withoutWriteLock {
		return unlocked{}
	}
	return new(sync.Mutex)
}

// standIn is the command running in the test's process.
type standIn struct {
	uri  string
	stop func() error // stops it and returns run's error
}

// startStandIn runs the command on the data folder dir and a free loopback
// port until stop or the end of the test.
func startStandIn(t testing.TB, dir string, cfg config) *standIn {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	cfg.dir = dir
	if cfg.ttlEvery == 0 {
		cfg.ttlEvery = time.Minute
	}
	if cfg.writes == nil {
		cfg.writes = writeLock()
	}
	cfg.log = slog.New(slog.NewTextHandler(testWriter{t}, &slog.HandlerOptions{Level: slog.LevelWarn}))
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- run(ctx, l, cfg) }()
	var once sync.Once
	var runErr error
	s := &standIn{uri: "mongodb://" + l.Addr().String() + "/", stop: func() error {
		once.Do(func() {
			cancel()
			runErr = <-done
		})
		return runErr
	}}
	t.Cleanup(func() {
		if err := s.stop(); err != nil {
			t.Errorf("run: %v", err)
		}
	})
	return s
}

// testWriter sends the command's log to the test's.
type testWriter struct{ t testing.TB }

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Log(string(p))
	return len(p), nil
}

// connect is a client of its own, with its own connection pool.
func connect(t testing.TB, uri string, opts ...*options.ClientOptions) *mongo.Client {
	t.Helper()
	c, err := mongo.Connect(append([]*options.ClientOptions{options.Client().ApplyURI(uri).
		SetServerSelectionTimeout(10 * time.Second)}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Disconnect(context.Background()) })
	return c
}

// waitFor polls done until it holds, for up to a minute.
func waitFor(t *testing.T, what string, done func() (bool, error)) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for {
		ok, err := done()
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		if ok {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within a minute", what)
		}
		<-time.After(20 * time.Millisecond)
	}
}

// Several independent clients racing updateOne({_id, revision: n}) see one
// winner per round, and the revision rises by one per round. Without the
// front's lock (-without-write-lock), FerretDB lets several win.
func TestConditionalUpdatesHaveOneWinner(t *testing.T) {
	s := startStandIn(t, t.TempDir(), config{})
	const writers, rounds = 4, 100
	ctx := context.Background()
	colls := make([]*mongo.Collection, writers)
	for i := range colls {
		colls[i] = connect(t, s.uri).Database("race").Collection("docs")
	}
	if _, err := colls[0].InsertOne(ctx, bson.D{{Key: "_id", Value: "w"}, {Key: "revision", Value: int64(0)}}); err != nil {
		t.Fatal(err)
	}
	for n := range int64(rounds) {
		var winners atomic.Int64
		errs := make(chan error, writers)
		start := make(chan struct{})
		var wg sync.WaitGroup
		for i, c := range colls {
			wg.Go(func() {
				<-start
				res, err := c.UpdateOne(ctx, bson.D{{Key: "_id", Value: "w"}, {Key: "revision", Value: n}},
					bson.D{{Key: "$set", Value: bson.D{{Key: "by", Value: i}}}, {Key: "$inc", Value: bson.D{{Key: "revision", Value: int64(1)}}}})
				if err != nil {
					errs <- err
					return
				}
				winners.Add(res.MatchedCount)
			})
		}
		close(start)
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Fatalf("round %d: %v", n, err)
		}
		var doc struct {
			Revision int64 `bson:"revision"`
		}
		if err := colls[0].FindOne(ctx, bson.D{{Key: "_id", Value: "w"}}).Decode(&doc); err != nil {
			t.Fatal(err)
		}
		if winners.Load() != 1 || doc.Revision != n+1 {
			t.Fatalf("round %d: %d winners, revision %d after it; want 1 winner, revision %d", n, winners.Load(), doc.Revision, n+1)
		}
	}
}

// Unacknowledged writes (moreToCome: FerretDB answers them anyway) leave the
// connection in step: the client, on one connection, goes on reading its
// answers, and the writes are done.
func TestUnacknowledgedWrites(t *testing.T) {
	s := startStandIn(t, t.TempDir(), config{})
	ctx := context.Background()
	c := connect(t, s.uri, options.Client().SetMaxPoolSize(1)).Database("w0").Collection("docs")
	unacked := c.Database().Collection("docs", options.Collection().SetWriteConcern(writeconcern.Unacknowledged()))
	const n = 20
	for i := range n {
		if _, err := unacked.InsertOne(ctx, bson.D{{Key: "_id", Value: i}}); err != nil {
			t.Fatal(err)
		}
		var got bson.M
		if err := c.FindOne(ctx, bson.D{{Key: "_id", Value: i}}).Decode(&got); err != nil {
			t.Fatalf("find after unacknowledged insert %d: %v", i, err)
		}
	}
}

// A message the front does not take closes the connection; stopping the
// command closes every connection and returns.
func TestConnectionsCloseRatherThanHang(t *testing.T) {
	s := startStandIn(t, t.TempDir(), config{})
	u, err := url.Parse(s.uri)
	if err != nil {
		t.Fatal(err)
	}
	dial := func() net.Conn {
		t.Helper()
		c, err := net.DialTimeout("tcp", u.Host, 5*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = c.Close() })
		if err := c.SetDeadline(time.Now().Add(time.Minute)); err != nil {
			t.Fatal(err)
		}
		return c
	}
	wantClosed := func(c net.Conn, what string) {
		t.Helper()
		if _, err := c.Read(make([]byte, 1)); !errors.Is(err, io.EOF) {
			t.Fatalf("%s: read %v, want the connection closed", what, err)
		}
	}

	compressed := dial()
	header := binary.LittleEndian.AppendUint32(nil, 16+9)
	header = binary.LittleEndian.AppendUint32(header, 1)
	header = binary.LittleEndian.AppendUint32(header, 0)
	header = binary.LittleEndian.AppendUint32(header, 2012) // OP_COMPRESSED
	if _, err := compressed.Write(append(header, make([]byte, 9)...)); err != nil {
		t.Fatal(err)
	}
	wantClosed(compressed, "OP_COMPRESSED")

	oversized := dial()
	if _, err := oversized.Write(binary.LittleEndian.AppendUint32(nil, maxMessageSize+1)); err != nil {
		t.Fatal(err)
	}
	wantClosed(oversized, "a message over the size bound")

	idle := dial()
	client := connect(t, s.uri)
	if err := client.Ping(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
	if err := s.stop(); err != nil {
		t.Fatal(err)
	}
	wantClosed(idle, "an idle connection at shutdown")
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := client.Ping(ctx, nil); err == nil {
		t.Fatal("ping after shutdown succeeded")
	}
}

// BenchmarkUpdates measures what the write lock costs: 4×GOMAXPROCS
// updaters, each of a document of its own (updateOne({_id}, {$inc})), in
// one database or each in a database of its own (FerretDB keeps one SQLite
// file per database), through the front with its lock and without, and
// straight to FerretDB's socket.
func BenchmarkUpdates(b *testing.B) {
	const parallelism = 4
	updaters := parallelism * runtime.GOMAXPROCS(0)
	for _, bc := range []struct {
		name   string
		writes sync.Locker
		direct bool
	}{
		{name: "front-locked", writes: new(sync.Mutex)},
		{name: "front-unlocked", writes: unlocked{}},
		{name: "ferretdb-direct", writes: unlocked{}, direct: true},
	} {
		sockets := b.TempDir()
		s := startStandIn(b, b.TempDir(), config{writes: bc.writes, sockets: sockets})
		uri := s.uri
		if bc.direct {
			uri = "mongodb://" + url.PathEscape(filepath.Join(sockets, backendSocket)) + "/"
		}
		client := connect(b, uri)
		ctx := context.Background()
		for _, layout := range []struct {
			name string
			db   func(updater int) string
		}{
			{name: "one-database", db: func(int) string { return "bench" }},
			{name: "a-database-each", db: func(i int) string { return fmt.Sprintf("bench%d", i) }},
		} {
			colls := make([]*mongo.Collection, updaters)
			for i := range colls {
				colls[i] = client.Database(layout.db(i)).Collection("docs")
				if _, err := colls[i].InsertOne(ctx, bson.D{{Key: "_id", Value: i}, {Key: "n", Value: 0}}); err != nil {
					b.Fatal(err)
				}
			}
			b.Run(bc.name+"/"+layout.name, func(b *testing.B) {
				var next atomic.Int64
				b.SetParallelism(parallelism)
				b.RunParallel(func(pb *testing.PB) {
					id := int((next.Add(1) - 1) % int64(updaters))
					for pb.Next() {
						if _, err := colls[id].UpdateOne(ctx, bson.D{{Key: "_id", Value: id}}, bson.D{{Key: "$inc", Value: bson.D{{Key: "n", Value: 1}}}}); err != nil {
							b.Error(err)
							return
						}
					}
				})
				b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "updates/s")
			})
		}
	}
}
