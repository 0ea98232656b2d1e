// Package mongotest is what the tests of a package on MongoDB run against:
// one FerretDB stand-in (pkg/testenv) for the whole package, a driver
// client on it, and a database of its own for each test. Only tests import
// it.
package mongotest

import (
	"context"
	"flag"
	"fmt"
	"os"
	"sync/atomic"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/liveproctor/workspaces/pkg/testenv"
	"github.com/liveproctor/workspaces/services/workspace/internal/adapters/mongoconn/indexcheck"
)

// Options are what a package's tests need of the stand-in.
type Options struct {
	// Name names the stand-in's temporary folder, as "mongostore".
	Name string
	// TTLMonitorInterval is testenv.FerretDBOptions'; tests of expiry
	// shorten it.
	TTLMonitorInterval time.Duration
	// Commands, when set, watches every command the client sends, and Run
	// fails on its verdict.
	Commands *indexcheck.Log
}

// Env is the stand-in and the client of one package's tests, set by Run.
type Env struct {
	opts    Options
	server  *testenv.Server
	client  *mongo.Client
	dbCount atomic.Int64
}

// New is an Env that Run starts.
func New(opts Options) *Env {
	return &Env{opts: opts}
}

// Run starts the stand-in, connects, runs the package's tests and stops it;
// its answer is TestMain's exit code.
func (e *Env) Run(m *testing.M) int {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute) // the first build of FerretDB takes a while
	defer cancel()
	dir, err := os.MkdirTemp("", e.opts.Name+"-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(dir)
	e.server, err = testenv.StartFerretDB(ctx, testenv.FerretDBOptions{Dir: dir, TTLMonitorInterval: e.opts.TTLMonitorInterval})
	if err != nil {
		fmt.Fprintln(os.Stderr, "start FerretDB:", err)
		return 1
	}
	defer e.server.Stop()
	connect := options.Client().ApplyURI(e.server.URI()).
		SetServerSelectionTimeout(2 * time.Second).
		SetConnectTimeout(2 * time.Second)
	if e.opts.Commands != nil {
		connect.SetMonitor(e.opts.Commands.Monitor())
	}
	if e.client, err = mongo.Connect(connect); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer e.client.Disconnect(context.Background())
	code := m.Run()
	if e.opts.Commands != nil {
		// Whether every kind of query was seen only means something when
		// every test ran.
		whole := flag.Lookup("test.run").Value.String() == ""
		if err := e.opts.Commands.Verdict(whole); err != nil {
			fmt.Fprintln(os.Stderr, "FAIL:", err)
			return 1
		}
	}
	return code
}

// Server is the stand-in, for tests that stop, pause or restart it.
func (e *Env) Server() *testenv.Server { return e.server }

// Client is the package's client, watched by Options.Commands.
func (e *Env) Client() *mongo.Client { return e.client }

// Database is a database of t's own on the package's client, dropped when
// t ends.
func (e *Env) Database(t testing.TB) *mongo.Database {
	db := e.client.Database(fmt.Sprintf("test%d", e.dbCount.Add(1)))
	t.Cleanup(func() { _ = db.Drop(context.Background()) })
	return db
}
