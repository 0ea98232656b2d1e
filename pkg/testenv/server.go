package testenv

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"syscall"
	"time"
)

const (
	// startAttempts is how many free ports a server tries when it picks
	// its port itself and another process takes it first.
	startAttempts = 5
	// bindRetryTimeout bounds how long a fixed address is retried while it
	// is busy (after a restart, the old listener may linger briefly).
	bindRetryTimeout = 5 * time.Second
	// readyTimeout bounds how long a started server may take to answer
	// when the caller's context has no earlier deadline.
	readyTimeout = 30 * time.Second
)

// Server is a stand-in (redis-server, FerretDB) running as a child process
// on a loopback address. After Stop, Restart brings it back on the same
// address with the same data folder.
type Server struct {
	name   string
	bin    string
	args   func(addr string) []string
	ready  func(ctx context.Context, addr string) error
	uri    string // the URI with %s for host:port
	output io.Writer

	mu   sync.Mutex
	addr string
	proc *Process // nil while stopped
}

// start starts s on addr, or on a free loopback port when addr is empty.
func (s *Server) start(ctx context.Context, addr string) error {
	if addr != "" {
		return s.launch(ctx, addr)
	}
	for attempt := 1; ; attempt++ {
		free, err := FreeAddr()
		if err != nil {
			return err
		}
		err = s.launch(ctx, free)
		if err == nil || !errors.Is(err, errAddrInUse) || attempt == startAttempts {
			return err
		}
	}
}

// Addr returns the host:port the server listens on.
func (s *Server) Addr() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.addr
}

// URI returns the server's connection string: mongodb://host:port/ for
// FerretDB, redis://host:port for Redis.
func (s *Server) URI() string { return fmt.Sprintf(s.uri, s.Addr()) }

// PID returns the running server's process id, or 0 while it is stopped;
// benchmarks read its CPU time and memory.
func (s *Server) PID() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.proc == nil {
		return 0
	}
	return s.proc.PID()
}

// Stop stops the server (SIGTERM, then SIGKILL after 20 seconds) and waits
// until it has exited. Stopping a stopped server does nothing.
func (s *Server) Stop() error {
	if p := s.take(); p != nil {
		return p.Stop()
	}
	return nil
}

// Kill ends the server at once (SIGKILL), as a crash would, and waits until
// it has exited; Restart brings it back. Killing a stopped server does
// nothing.
func (s *Server) Kill() error {
	if p := s.take(); p != nil {
		return p.Kill()
	}
	return nil
}

// take returns the running process, if any, and forgets it.
func (s *Server) take() *Process {
	s.mu.Lock()
	defer s.mu.Unlock()
	p := s.proc
	s.proc = nil
	return p
}

// Pause suspends the running server (SIGSTOP): it keeps its connections
// and its port, and the kernel still accepts new connections for it, but
// nothing is answered, as with a server that hangs. Resume undoes it.
//
// It returns once the process is stopped: the signal is delivered
// asynchronously, and on a busy machine a request sent right after it
// could otherwise still be answered.
func (s *Server) Pause() error {
	if err := s.signal(syscall.SIGSTOP); err != nil {
		return err
	}
	s.mu.Lock()
	p := s.proc
	s.mu.Unlock()
	if p == nil {
		return fmt.Errorf("%s is not running", s.name)
	}
	return waitStopped(p.cmd.Process.Pid, 5*time.Second)
}

// Resume lets a paused server run again (SIGCONT).
func (s *Server) Resume() error { return s.signal(syscall.SIGCONT) }

func (s *Server) signal(sig os.Signal) error {
	s.mu.Lock()
	p := s.proc
	s.mu.Unlock()
	if p == nil {
		return fmt.Errorf("%s is not running", s.name)
	}
	return p.Signal(sig)
}

// Restart stops the server if it is running and starts it again on the
// same address, retrying for a few seconds while the port is still busy.
func (s *Server) Restart(ctx context.Context) error {
	if err := s.Stop(); err != nil {
		return err
	}
	return s.launchRetrying(ctx, s.Addr())
}

// launchRetrying launches the server on addr, retrying for bindRetryTimeout
// while the address is in use.
func (s *Server) launchRetrying(ctx context.Context, addr string) error {
	deadline := time.Now().Add(bindRetryTimeout)
	for {
		err := s.launch(ctx, addr)
		if err == nil || !errors.Is(err, errAddrInUse) || time.Now().After(deadline) {
			return err
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%w (last error: %w)", ctx.Err(), err)
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// launch starts one process on addr and records it once it answers.
func (s *Server) launch(ctx context.Context, addr string) error {
	p, err := StartProcess(Command{Name: s.name, Path: s.bin, Args: s.args(addr), Output: s.output})
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, readyTimeout)
	defer cancel()
	if err := WaitReady(ctx, func(ctx context.Context) error { return s.ready(ctx, addr) }, p); err != nil {
		_ = p.Stop() // the start failed already; that is the error to report
		if strings.Contains(strings.ToLower(p.Output()), "address already in use") {
			return p.withOutput(fmt.Errorf("%s on %s: %w", s.name, addr, errAddrInUse))
		}
		return p.withOutput(fmt.Errorf("%s on %s did not answer: %w", s.name, addr, err))
	}
	s.mu.Lock()
	s.addr, s.proc = addr, p
	s.mu.Unlock()
	return nil
}
