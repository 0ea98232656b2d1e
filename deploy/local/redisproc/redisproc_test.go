package redisproc

import (
	"context"
	"errors"
	"net"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// startServer starts a server for the test and stops it at cleanup. A
// missing redis-server fails the test: `make test` installs it.
func startServer(t *testing.T, opts Options) *Server {
	t.Helper()

	if _, err := LookPath(); err != nil {
		t.Fatal(err)
	}

	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()

	srv, err := Start(ctx, opts)
	if err != nil {
		t.Fatalf("Start: %v", err)
	}
	t.Cleanup(func() {
		if err := srv.Stop(); err != nil {
			t.Errorf("Stop: %v", err)
		}
	})

	return srv
}

// restart restarts srv or fails the test.
func restart(t *testing.T, srv *Server) {
	t.Helper()

	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()

	if err := srv.Restart(ctx); err != nil {
		t.Fatalf("Restart: %v", err)
	}
}

func TestStartStopRestart(t *testing.T) {
	srv := startServer(t, Options{Dir: t.TempDir()})

	addr := srv.Addr()
	if !strings.HasPrefix(addr, "127.0.0.1:") || strings.HasSuffix(addr, ":0") {
		t.Fatalf("Addr() = %q, want 127.0.0.1 with a real port", addr)
	}

	c := dialRESP(t, addr)
	c.mustDo(t, "PONG", "PING")
	c.mustDo(t, "OK", "SET", "greeting", "hello world")
	c.mustDo(t, "hello world", "GET", "greeting")

	if err := srv.Stop(); err != nil {
		t.Fatalf("Stop: %v", err)
	}

	_, err := net.DialTimeout("tcp", addr, time.Second)
	if !errors.Is(err, syscall.ECONNREFUSED) {
		t.Fatalf("dial after Stop: err = %v, want connection refused", err)
	}

	restart(t, srv)

	if got := srv.Addr(); got != addr {
		t.Fatalf("Addr() after Restart = %q, want %q", got, addr)
	}

	c = dialRESP(t, addr)
	c.mustDo(t, "PONG", "PING")
	c.mustDo(t, "(nil)", "GET", "greeting") // no persistence: data is gone
}

func TestPersistSurvivesRestart(t *testing.T) {
	dir := t.TempDir()
	srv := startServer(t, Options{Dir: dir, Persist: true})

	c := dialRESP(t, srv.Addr())
	c.mustDo(t, "OK", "SET", "kept", "value")

	if err := srv.Stop(); err != nil {
		t.Fatalf("Stop: %v", err)
	}

	restart(t, srv)

	c = dialRESP(t, srv.Addr())
	c.mustDo(t, "value", "GET", "kept")
}

func TestFixedPort(t *testing.T) {
	port, err := freePort()
	if err != nil {
		t.Fatal(err)
	}

	srv := startServer(t, Options{Dir: t.TempDir(), Port: port})

	if got, want := srv.Addr(), net.JoinHostPort("127.0.0.1", strconv.Itoa(port)); got != want {
		t.Fatalf("Addr() = %q, want %q", got, want)
	}

	dialRESP(t, srv.Addr()).mustDo(t, "PONG", "PING")
}

func TestStartFailureIncludesOutput(t *testing.T) {
	if _, err := LookPath(); err != nil {
		t.Fatal(err)
	}

	// Hold the port so redis-server cannot bind it.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()

	port := l.Addr().(*net.TCPAddr).Port

	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()

	_, err = Start(ctx, Options{Dir: t.TempDir(), Port: port})
	if err == nil {
		t.Fatal("Start on a busy port succeeded, want an error")
	}

	t.Logf("Start error: %v", err)

	if !errors.Is(err, errAddrInUse) || !strings.Contains(err.Error(), "redis-server output:") {
		t.Fatalf("Start error = %v, want address in use with the server's output", err)
	}
}

func TestNotInstalledError(t *testing.T) {
	err := &notInstalledError{err: exec.ErrNotFound}

	want := `redis-server is not installed: run "make test-deps" (Debian: apt-get install redis-server)`
	if err.Error() != want {
		t.Fatalf("Error() = %q, want %q", err.Error(), want)
	}

	if !IsNotInstalled(err) || !errors.Is(err, exec.ErrNotFound) {
		t.Fatal("error does not unwrap as expected")
	}
}
