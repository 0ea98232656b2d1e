// Command ferretdb runs FerretDB, a MongoDB wire-protocol server, on SQLite
// files in one folder until SIGTERM or SIGINT. pkg/testenv starts it as a
// child process for the tests and the local run.
//
// Clients do not reach FerretDB directly: a front in the same process
// (front.go) listens on -listen and relays to FerretDB, which listens on a
// Unix socket in a private temporary folder. The front makes up for what
// FerretDB v1.24 does differently from MongoDB where production code would
// otherwise have to: it serialises write commands, so conditional updates
// are atomic, and it gives the stand-in TTL indexes (ttl_indexes.go). What is left
// (every query but a lone _id equality scans) is stated in the README.
//
// It is a module of its own, outside go.work, so FerretDB and its
// dependencies are required by this module only: the services' tests reach
// FerretDB over the MongoDB protocol, never by importing it. FerretDB turns
// its telemetry off when embedded like this, so the process reaches no
// network beyond its own listener.
package main

import (
	"context"
	"database/sql"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"os/signal"
	"path/filepath"
	"sync"
	"syscall"
	"time"

	"github.com/FerretDB/FerretDB/ferretdb"
)

func main() {
	listen := flag.String("listen", "127.0.0.1:27017", "TCP address to listen on")
	dir := flag.String("dir", "", "folder of the SQLite databases (required; created when missing)")
	ttlEvery := flag.Duration("ttl-monitor-interval", time.Minute,
		"how often documents past their TTL index's expireAfterSeconds are removed (MongoDB's TTL monitor: every 60s)")
	flag.Parse()
	if err := start(*listen, *dir, *ttlEvery); err != nil {
		fmt.Fprintln(os.Stderr, "ferretdb:", err)
		os.Exit(1)
	}
}

func start(listen, dir string, ttlEvery time.Duration) error {
	if dir == "" || flag.NArg() > 0 {
		flag.Usage()
		return errors.New("-dir is required and nothing else is")
	}
	if ttlEvery <= 0 {
		return errors.New("-ttl-monitor-interval must be positive")
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	// A busy port fails here, with "address already in use" in the message.
	l, err := net.Listen("tcp", listen)
	if err != nil {
		return err
	}
	return run(ctx, l, config{
		dir:      dir,
		ttlEvery: ttlEvery,
		writes:   new(sync.Mutex),
		log:      slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn})),
	})
}

// config is what run needs besides its listener.
type config struct {
	dir      string
	ttlEvery time.Duration
	// writes is the lock every write command holds.
	writes sync.Locker
	log    *slog.Logger
	// sockets is the folder of FerretDB's socket; "" makes a temporary
	// one. A benchmark names it to reach FerretDB without the front.
	sockets string
}

// backendSocket names FerretDB's socket in its folder.
const backendSocket = "backend.sock"

// run serves the MongoDB protocol on l, with FerretDB on the SQLite files in
// cfg.dir behind the front, until ctx ends. Then the front stops accepting
// and closes its connections, the TTL monitor and the indexer stop, and
// FerretDB closes its files.
func run(ctx context.Context, l net.Listener, cfg config) error {
	defer l.Close()
	dir, err := filepath.Abs(cfg.dir)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(dir, 0o750); err != nil {
		return err
	}
	ttl, err := loadTTLIndexes(filepath.Join(dir, ttlFile))
	if err != nil {
		return err
	}
	// The socket's folder is private to this process's user, so clients
	// reach FerretDB through the front only.
	sockets := cfg.sockets
	if sockets == "" {
		if sockets, err = os.MkdirTemp("", "ferretdb-"); err != nil {
			return err
		}
		defer os.RemoveAll(sockets)
	}
	socket := filepath.Join(sockets, backendSocket)
	fdb, err := ferretdb.New(&ferretdb.Config{
		Listener:  ferretdb.ListenerConfig{Unix: socket},
		Logger:    cfg.log,
		Handler:   "sqlite",
		SQLiteURL: "file:" + dir + "/",
	})
	if err != nil {
		return err
	}

	serving, stopServing := context.WithCancel(ctx)
	defer stopServing()
	backendCtx, stopBackend := context.WithCancel(context.Background())
	defer stopBackend()
	backendDone := make(chan struct{})
	go func() {
		defer close(backendDone)
		// Run returns once its listener, its connections (given about
		// three seconds to finish) and the SQLite files are closed.
		_ = fdb.Run(backendCtx)
		stopServing()
	}()

	f := &front{backend: socket, writes: cfg.writes, ttl: ttl, log: cfg.log, conns: map[io.Closer]struct{}{}}
	indexer := &idIndexer{dir: dir, interval: time.Second, log: cfg.log, dbs: map[string]*sql.DB{}}
	var loops sync.WaitGroup
	loops.Go(func() { indexer.run(serving) })
	loops.Go(func() { f.expire(serving, cfg.ttlEvery) })
	err = f.serve(serving, l)
	stopServing()
	loops.Wait()
	stopBackend()
	<-backendDone
	if err == nil && ctx.Err() == nil {
		err = errors.New("FerretDB stopped")
	}
	return err
}
