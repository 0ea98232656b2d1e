// Package ferret runs an embedded FerretDB (a MongoDB wire-protocol server
// backed by SQLite) inside the current process, for local runs and tests.
//
// FerretDB v1.24.0 disables its telemetry itself when embedded (the library
// sets the telemetry state to disabled and locked, and never starts a
// reporter), so a Server never reaches the network beyond its own listener.
package ferret

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/FerretDB/FerretDB/ferretdb"
)

const (
	// defaultAddr lets the kernel pick a free loopback port.
	defaultAddr = "127.0.0.1:0"

	// readyTimeout bounds how long Start and Restart wait for the port to
	// accept connections when the caller's context has no earlier deadline.
	readyTimeout = 10 * time.Second

	// bindRetryTimeout bounds how long Restart keeps retrying while the
	// previous listener's port is still busy.
	bindRetryTimeout = 5 * time.Second
)

// Options configures Start.
type Options struct {
	// Dir is the folder holding the SQLite databases; it is created if missing.
	Dir string

	// Addr is the TCP address to listen on; empty means "127.0.0.1:0".
	Addr string

	// Logger receives FerretDB's logs; nil discards them.
	Logger *slog.Logger
}

// Server is a running (or stopped) embedded FerretDB instance.
//
// After the first start it keeps its resolved address, so Restart brings it
// back on the same port with the same data folder.
type Server struct {
	dir    string
	logger *slog.Logger

	mu     sync.Mutex
	addr   string             // resolved host:port once started
	uri    string             // mongodb:// URI of the current or last run
	cancel context.CancelFunc // stops the current run; nil when stopped
	done   chan struct{}      // closed when the current run's Run returned
}

// Start creates opts.Dir if needed, runs FerretDB with the SQLite handler in
// the background and returns once its port accepts connections.
func Start(ctx context.Context, opts Options) (*Server, error) {
	if opts.Dir == "" {
		return nil, errors.New("ferret: Options.Dir is required")
	}

	dir, err := filepath.Abs(opts.Dir)
	if err != nil {
		return nil, fmt.Errorf("ferret: resolve data folder %q: %w", opts.Dir, err)
	}

	if err := os.MkdirAll(dir, 0o750); err != nil {
		return nil, fmt.Errorf("ferret: create data folder: %w", err)
	}

	addr := opts.Addr
	if addr == "" {
		addr = defaultAddr
	}

	logger := opts.Logger
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}

	s := &Server{dir: dir, logger: logger, addr: addr}
	if err := s.start(ctx, false); err != nil {
		return nil, err
	}

	return s, nil
}

// URI returns the mongodb:// connection string of the server.
func (s *Server) URI() string {
	s.mu.Lock()
	defer s.mu.Unlock()

	return s.uri
}

// Addr returns the host:port the server listens on.
func (s *Server) Addr() string {
	s.mu.Lock()
	defer s.mu.Unlock()

	return s.addr
}

// Stop stops the server and waits until its listener and all client
// connections are closed. FerretDB gives connected clients up to about three
// seconds to disconnect. Stopping a stopped server is a no-op.
func (s *Server) Stop() error {
	s.mu.Lock()
	cancel, done := s.cancel, s.done
	s.cancel, s.done = nil, nil
	s.mu.Unlock()

	if cancel == nil {
		return nil
	}

	cancel()
	<-done

	return nil
}

// Restart starts the server again on the same address and data folder. It
// stops the server first if it is still running, and retries for a few
// seconds while the port is still busy.
func (s *Server) Restart(ctx context.Context) error {
	if err := s.Stop(); err != nil {
		return fmt.Errorf("ferret: restart: %w", err)
	}

	return s.start(ctx, true)
}

// start runs a new FerretDB instance on s.addr. With retryBind it keeps
// retrying for a bounded time while the address is in use.
func (s *Server) start(ctx context.Context, retryBind bool) error {
	s.mu.Lock()
	addr := s.addr
	s.mu.Unlock()

	f, err := s.newFerret(ctx, addr, retryBind)
	if err != nil {
		return err
	}

	runCtx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	done := make(chan struct{})

	go func() {
		defer close(done)

		if err := f.Run(runCtx); err != nil {
			s.logger.Error("FerretDB stopped with an error", slog.Any("error", err))
		}
	}()

	// MongoDBURI is safe here: New has already bound the listener.
	uri := f.MongoDBURI()

	u, err := url.Parse(uri)
	if err != nil {
		cancel()
		<-done

		return fmt.Errorf("ferret: parse URI %q: %w", uri, err)
	}

	if err := waitReady(ctx, u.Host, done); err != nil {
		cancel()
		<-done

		return fmt.Errorf("ferret: wait for %s: %w", u.Host, err)
	}

	s.mu.Lock()
	s.addr, s.uri = u.Host, uri
	s.cancel, s.done = cancel, done
	s.mu.Unlock()

	return nil
}

// newFerret constructs FerretDB listening on addr. The listener is bound by
// ferretdb.New itself, so a busy port shows up here.
func (s *Server) newFerret(ctx context.Context, addr string, retryBind bool) (*ferretdb.FerretDB, error) {
	cfg := &ferretdb.Config{
		Listener:  ferretdb.ListenerConfig{TCP: addr},
		Logger:    s.logger,
		Handler:   "sqlite",
		SQLiteURL: "file:" + s.dir + "/",
	}

	deadline := time.Now().Add(bindRetryTimeout)

	for {
		f, err := ferretdb.New(cfg)
		if err == nil {
			return f, nil
		}

		// ferretdb.New formats the cause with %s, so the error chain is lost
		// and only the text tells a busy port apart.
		busy := strings.Contains(err.Error(), "address already in use")
		if !retryBind || !busy || time.Now().After(deadline) {
			return nil, fmt.Errorf("ferret: start FerretDB on %s: %w", addr, err)
		}

		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("ferret: start FerretDB on %s: %w (last error: %w)", addr, ctx.Err(), err)
		case <-time.After(100 * time.Millisecond):
		}
	}
}
