// Command ferretdb runs FerretDB, a MongoDB wire-protocol server, on SQLite
// files in one folder until SIGTERM or SIGINT. pkg/testenv starts it as a
// child process for the tests and the local run.
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
	"log/slog"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"

	"github.com/FerretDB/FerretDB/ferretdb"
)

func main() {
	listen := flag.String("listen", "127.0.0.1:27017", "TCP address to listen on")
	dir := flag.String("dir", "", "folder of the SQLite databases (required; created when missing)")
	flag.Parse()
	if err := run(*listen, *dir); err != nil {
		fmt.Fprintln(os.Stderr, "ferretdb:", err)
		os.Exit(1)
	}
}

func run(listen, dir string) error {
	if dir == "" || flag.NArg() > 0 {
		flag.Usage()
		return errors.New("-dir is required and nothing else is")
	}
	dir, err := filepath.Abs(dir)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(dir, 0o750); err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	// New binds the listener, so a busy port fails here, with "address
	// already in use" in the message.
	logger := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	f, err := ferretdb.New(&ferretdb.Config{
		Listener:  ferretdb.ListenerConfig{TCP: listen},
		Logger:    logger,
		Handler:   "sqlite",
		SQLiteURL: "file:" + dir + "/",
	})
	if err != nil {
		return err
	}
	indexer := &idIndexer{dir: dir, interval: time.Second, log: logger, dbs: map[string]*sql.DB{}}
	indexed := make(chan struct{})
	go func() {
		defer close(indexed)
		indexer.run(ctx)
	}()
	// Run returns once the listener, the connections (given about three
	// seconds to finish) and the SQLite files are closed.
	err = f.Run(ctx)
	<-indexed
	return err
}
