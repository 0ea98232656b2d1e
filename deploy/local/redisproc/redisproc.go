// Package redisproc runs a real redis-server as a child process bound to the
// loopback interface, for local runs and tests.
package redisproc

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"time"
)

const (
	// startAttempts is how many free ports Start tries when it picks the
	// port itself and another process grabs it first.
	startAttempts = 5

	// bindRetryTimeout bounds how long a fixed port is retried while busy.
	bindRetryTimeout = 5 * time.Second
)

// Options configures Start.
type Options struct {
	// Dir is redis-server's working folder (--dir); it is created if missing.
	Dir string

	// Port is the loopback TCP port; 0 picks a free one.
	Port int

	// Persist turns on the append-only file in Dir so data survives Restart.
	// When false, persistence is off (--save '' --appendonly no).
	Persist bool

	// Logger receives redis-server's output at debug level; nil discards it.
	Logger *slog.Logger
}

// Server is a redis-server child process. After Stop it can be brought back
// with Restart on the same port and folder.
type Server struct {
	bin     string
	dir     string
	persist bool
	logger  *slog.Logger // may be nil

	mu   sync.Mutex
	port int
	proc *process // nil when stopped
}

// Start launches redis-server on 127.0.0.1 and returns once it answers PING.
func Start(ctx context.Context, opts Options) (*Server, error) {
	bin, err := LookPath()
	if err != nil {
		return nil, err
	}

	if opts.Dir == "" {
		return nil, errors.New("redisproc: Options.Dir is required")
	}

	dir, err := filepath.Abs(opts.Dir)
	if err != nil {
		return nil, fmt.Errorf("redisproc: resolve folder %q: %w", opts.Dir, err)
	}

	if err := os.MkdirAll(dir, 0o750); err != nil {
		return nil, fmt.Errorf("redisproc: create folder: %w", err)
	}

	s := &Server{bin: bin, dir: dir, persist: opts.Persist, logger: opts.Logger}

	if opts.Port != 0 {
		if err := s.launchRetrying(ctx, opts.Port); err != nil {
			return nil, err
		}

		return s, nil
	}

	for attempt := 1; ; attempt++ {
		port, err := freePort()
		if err != nil {
			return nil, fmt.Errorf("redisproc: %w", err)
		}

		err = s.launch(ctx, port)
		if err == nil {
			return s, nil
		}

		if !errors.Is(err, errAddrInUse) || attempt == startAttempts {
			return nil, err
		}
	}
}

// Addr returns "127.0.0.1:port".
func (s *Server) Addr() string {
	s.mu.Lock()
	defer s.mu.Unlock()

	return net.JoinHostPort("127.0.0.1", strconv.Itoa(s.port))
}

// PID returns the running redis-server's process id, or 0 when it is
// stopped; benchmarks read its CPU time and memory.
func (s *Server) PID() int {
	s.mu.Lock()
	defer s.mu.Unlock()

	if s.proc == nil {
		return 0
	}

	return s.proc.cmd.Process.Pid
}

// Stop sends SIGTERM, waits for redis-server to exit and kills it if it is
// still running after 5 seconds. Stopping a stopped server is a no-op.
func (s *Server) Stop() error {
	s.mu.Lock()
	p := s.proc
	s.proc = nil
	s.mu.Unlock()

	if p == nil {
		return nil
	}

	if err := p.stop(); err != nil {
		return fmt.Errorf("redisproc: stop: %w", err)
	}

	return nil
}

// Restart starts redis-server again on the same port and folder, stopping it
// first if it is still running. It retries for a few seconds while the port
// is busy.
func (s *Server) Restart(ctx context.Context) error {
	if err := s.Stop(); err != nil {
		return err
	}

	s.mu.Lock()
	port := s.port
	s.mu.Unlock()

	return s.launchRetrying(ctx, port)
}

// launchRetrying launches redis-server on port, retrying for a bounded time
// while the port is in use.
func (s *Server) launchRetrying(ctx context.Context, port int) error {
	deadline := time.Now().Add(bindRetryTimeout)

	for {
		err := s.launch(ctx, port)
		if err == nil || !errors.Is(err, errAddrInUse) || time.Now().After(deadline) {
			return err
		}

		select {
		case <-ctx.Done():
			return fmt.Errorf("redisproc: %w (last error: %w)", ctx.Err(), err)
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// launch starts one redis-server on port and records it once it is ready.
func (s *Server) launch(ctx context.Context, port int) error {
	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(port))

	p, err := startProcess(ctx, s.bin, s.args(port), addr, s.logger)
	if err != nil {
		return fmt.Errorf("redisproc: port %d: %w", port, err)
	}

	s.mu.Lock()
	s.port, s.proc = port, p
	s.mu.Unlock()

	return nil
}

// args returns redis-server's command line for port.
func (s *Server) args(port int) []string {
	args := []string{
		"--bind", "127.0.0.1",
		"--port", strconv.Itoa(port),
		"--dir", s.dir,
		"--protected-mode", "yes",
		"--daemonize", "no",
	}

	if s.persist {
		return append(args, "--appendonly", "yes")
	}

	return append(args, "--save", "", "--appendonly", "no")
}
