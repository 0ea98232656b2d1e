package testenv

import (
	"context"
	"errors"
	"net"
	"strings"
	"syscall"
	"testing"
	"time"
)

func startRedis(t *testing.T, opts RedisOptions) *Server {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	s, err := StartRedis(ctx, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := s.Stop(); err != nil {
			t.Errorf("Stop: %v", err)
		}
	})
	return s
}

// do runs a Redis command and compares its reply.
func do(t *testing.T, addr, want string, args ...string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	got, err := redisDo(ctx, addr, args...)
	if err != nil || got != want {
		t.Fatalf("%s = %q, %v; want %q", strings.Join(args, " "), got, err, want)
	}
}

func restart(t *testing.T, s *Server) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	addr := s.Addr()
	if err := s.Restart(ctx); err != nil {
		t.Fatalf("Restart: %v", err)
	}
	if s.Addr() != addr {
		t.Fatalf("address after Restart %s, want %s", s.Addr(), addr)
	}
}

func wantRefused(t *testing.T, addr string) {
	t.Helper()
	if _, err := net.DialTimeout("tcp", addr, time.Second); !errors.Is(err, syscall.ECONNREFUSED) {
		t.Fatalf("dial %s after Stop: %v, want connection refused", addr, err)
	}
}

func TestRedisStopRestart(t *testing.T) {
	s := startRedis(t, RedisOptions{Dir: t.TempDir()})
	if !strings.HasPrefix(s.Addr(), "127.0.0.1:") || s.URI() != "redis://"+s.Addr() || s.PID() == 0 {
		t.Fatalf("Addr %q, URI %q, PID %d", s.Addr(), s.URI(), s.PID())
	}
	do(t, s.Addr(), "OK", "SET", "greeting", "hello world")
	do(t, s.Addr(), "hello world", "GET", "greeting")
	if err := s.Stop(); err != nil {
		t.Fatal(err)
	}
	wantRefused(t, s.Addr())
	if s.PID() != 0 {
		t.Fatalf("PID %d after Stop", s.PID())
	}
	restart(t, s)
	do(t, s.Addr(), "(nil)", "GET", "greeting") // nothing was saved
}

func TestRedisPersistSurvivesRestart(t *testing.T) {
	s := startRedis(t, RedisOptions{Dir: t.TempDir(), Persist: true})
	do(t, s.Addr(), "OK", "SET", "kept", "value")
	restart(t, s)
	do(t, s.Addr(), "value", "GET", "kept")
}

func TestRedisOnAGivenAddress(t *testing.T) {
	addr, err := FreeAddr()
	if err != nil {
		t.Fatal(err)
	}
	s := startRedis(t, RedisOptions{Dir: t.TempDir(), Addr: addr})
	if s.Addr() != addr {
		t.Fatalf("Addr %s, want %s", s.Addr(), addr)
	}
	do(t, addr, "PONG", "PING")
}

func TestABusyAddressFailsWithTheServersOutput(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	_, err = StartRedis(ctx, RedisOptions{Dir: t.TempDir(), Addr: l.Addr().String()})
	if !errors.Is(err, errAddrInUse) || !strings.Contains(err.Error(), "redis output:") {
		t.Fatalf("StartRedis on a busy port: %v, want address in use, with the output", err)
	}
	_, err = StartFerretDB(ctx, FerretDBOptions{Dir: t.TempDir(), Addr: l.Addr().String()})
	if !errors.Is(err, errAddrInUse) || !strings.Contains(err.Error(), "ferretdb output:") {
		t.Fatalf("StartFerretDB on a busy port: %v, want address in use, with the output", err)
	}
}

func TestRedisCluster(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	c, err := StartRedisCluster(ctx, t.TempDir(), 3)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Stop() })
	for _, addr := range c.Addrs() {
		info, err := redisDo(ctx, addr, "CLUSTER", "INFO")
		if err != nil || !strings.Contains(info, "cluster_known_nodes:3") {
			t.Fatalf("%s: CLUSTER INFO %q, %v", addr, info, err)
		}
	}
}

func TestFerretDBStopRestart(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute) // the first build takes a while
	defer cancel()
	s, err := StartFerretDB(ctx, FerretDBOptions{Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := s.Stop(); err != nil {
			t.Errorf("Stop: %v", err)
		}
	})
	if s.URI() != "mongodb://"+s.Addr()+"/" {
		t.Fatalf("URI %q", s.URI())
	}
	if err := s.Stop(); err != nil {
		t.Fatal(err)
	}
	wantRefused(t, s.Addr())
	restart(t, s)
	if err := mongoPing(ctx, s.Addr()); err != nil {
		t.Fatal(err)
	}
}

func TestFerretDBRequiresADir(t *testing.T) {
	if _, err := StartFerretDB(context.Background(), FerretDBOptions{}); err == nil {
		t.Fatal("StartFerretDB without Dir succeeded")
	}
}

func TestRedisPauseResumeKill(t *testing.T) {
	s := startRedis(t, RedisOptions{Dir: t.TempDir()})
	if err := s.Pause(); err != nil {
		t.Fatal(err)
	}
	// Paused, it accepts connections (the kernel does) and answers nothing.
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	if got, err := redisDo(ctx, s.Addr(), "PING"); err == nil {
		t.Fatalf("PING to a paused server answered %q", got)
	}
	if err := s.Resume(); err != nil {
		t.Fatal(err)
	}
	do(t, s.Addr(), "PONG", "PING")

	if err := s.Pause(); err != nil {
		t.Fatal(err)
	}
	if err := s.Kill(); err != nil { // a paused server dies too
		t.Fatal(err)
	}
	wantRefused(t, s.Addr())
	if err := s.Pause(); err == nil {
		t.Fatal("Pause of a killed server: no error")
	}
	restart(t, s)
	do(t, s.Addr(), "PONG", "PING")
}
