package redisconn_test

import (
	"context"
	"errors"
	"net"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/liveproctor/workspaces/pkg/breaker"
	"github.com/liveproctor/workspaces/pkg/envconfig"
	"github.com/liveproctor/workspaces/pkg/fault"
	"github.com/liveproctor/workspaces/pkg/redisconn"
	"github.com/liveproctor/workspaces/pkg/telemetry"
	"github.com/liveproctor/workspaces/pkg/testenv"
)

func TestFailFastDefaults(t *testing.T) {
	r := envconfig.FromMap(map[string]string{"REDIS_ADDR": "127.0.0.1:6379"})
	opts := redisconn.ReadOptions(r, true)
	if err := r.Err(); err != nil {
		t.Fatal(err)
	}
	if opts.DialTimeout != redisconn.DefaultTimeout || opts.ReadTimeout != redisconn.DefaultTimeout ||
		opts.PoolTimeout != redisconn.DefaultTimeout || opts.MaxRetries != -1 || !opts.ContextTimeoutEnabled {
		t.Fatalf("options %+v: want every timeout %s, no retries, deadlines from the context", opts, redisconn.DefaultTimeout)
	}
}

func TestUnreachable(t *testing.T) {
	for _, tt := range []struct {
		err  error
		want bool
	}{
		{redis.Nil, false},
		{redis.ErrClosed, true},
		{&net.OpError{Op: "dial", Err: errors.New("connection refused")}, true},
		{context.DeadlineExceeded, true},
	} {
		if got := redisconn.Unreachable(tt.err); got != tt.want {
			t.Errorf("Unreachable(%v) = %v, want %v", tt.err, got, tt.want)
		}
	}
}

// A Redis that refuses writes (full under noeviction) is an outage of
// each write to its caller, but not unreachable: reads and the breaker's
// probe still get answers, so the breaker stays closed. Once it has room
// again, writes are taken.
func TestFullRedisIsAnOutageOfWritesOnly(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	srv, err := testenv.StartRedis(ctx, testenv.RedisOptions{Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Stop()
	s := breaker.Defaults(time.Second)
	s.Unreachable = redisconn.Unreachable
	b := breaker.New(s)
	opts := redisconn.ReadOptions(envconfig.FromMap(map[string]string{"REDIS_ADDR": srv.Addr()}), true)
	client, err := redisconn.Open(opts, telemetry.NewMetrics(), redisconn.WithBreaker(b))
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()
	if err := client.Set(ctx, "kept", "1", 0).Err(); err != nil {
		t.Fatal(err)
	}
	ping := func(ctx context.Context) error { return client.Ping(ctx).Err() }
	b.Probe(ctx, ping, nil)
	if err := testenv.SetRedisFull(ctx, srv.Addr(), true); err != nil {
		t.Fatal(err)
	}

	for range 3 {
		err := client.Set(ctx, "new", "1", time.Minute).Err()
		if !redis.HasErrorPrefix(err, "OOM") {
			t.Fatalf("SET on a full Redis: %v, want an OOM reply", err)
		}
		if redisconn.Unreachable(err) {
			t.Fatalf("Unreachable(%v) = true", err)
		}
		out := redisconn.Outage("store", err, "the store is unavailable")
		if e, ok := fault.As(out); !ok || e.Kind != fault.Unavailable || e.Message != "the store is unavailable" {
			t.Fatalf("Outage(%v) = %v, want Unavailable", err, out)
		}
	}
	if v, err := client.Get(ctx, "kept").Result(); err != nil || v != "1" {
		t.Fatalf("GET on a full Redis: %q, %v", v, err)
	}
	if b.Due() {
		t.Fatal("refused writes asked the breaker for a probe")
	}
	b.Probe(ctx, ping, nil)
	if err := b.Err(); err != nil {
		t.Fatalf("breaker probed on a full Redis: %v, want closed", err)
	}

	if err := testenv.SetRedisFull(ctx, srv.Addr(), false); err != nil {
		t.Fatal(err)
	}
	if err := client.Set(ctx, "new", "1", time.Minute).Err(); err != nil {
		t.Fatalf("SET once Redis has room: %v", err)
	}
}

// Every error of a command is an outage to the caller: connections that
// fail, and replies that refuse.
func TestOutage(t *testing.T) {
	for _, err := range []error{
		redis.ErrClosed,
		&net.OpError{Op: "dial", Err: errors.New("connection refused")},
		context.DeadlineExceeded,
		breaker.ErrOpen,
	} {
		out := redisconn.Outage("op", err, "msg")
		if fault.KindOf(out) != fault.Unavailable || !errors.Is(out, err) {
			t.Errorf("Outage(%v) = %v, want Unavailable wrapping it", err, out)
		}
	}
}

// With the breaker open, commands and pipelines fail at once with
// ErrOpen, without reaching for Redis; the breaker's own probe still does.
func TestOpenBreakerFailsCommandsAtOnce(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close() // nobody listens there now: dials are refused
	s := breaker.Defaults(time.Second)
	s.Unreachable = redisconn.Unreachable
	b := breaker.New(s)
	opts := redisconn.ReadOptions(envconfig.FromMap(map[string]string{"REDIS_ADDR": addr}), true)
	client, err := redisconn.Open(opts, telemetry.NewMetrics(), redisconn.WithBreaker(b))
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()
	ctx := context.Background()
	probed := false
	b.Probe(ctx, func(ctx context.Context) error { probed = true; return client.Ping(ctx).Err() }, nil)
	if !probed || !errors.Is(b.Err(), breaker.ErrOpen) {
		t.Fatalf("after a probe of a closed port: breaker %v", b.Err())
	}
	if err := client.Get(ctx, "k").Err(); !errors.Is(err, breaker.ErrOpen) {
		t.Fatalf("GET with the breaker open: %v, want ErrOpen", err)
	}
	cmds, err := client.Pipelined(ctx, func(p redis.Pipeliner) error {
		p.Get(ctx, "a")
		p.Get(ctx, "b")
		return nil
	})
	if !errors.Is(err, breaker.ErrOpen) || len(cmds) != 2 || !errors.Is(cmds[1].Err(), breaker.ErrOpen) {
		t.Fatalf("pipeline with the breaker open: %v, %v", cmds, err)
	}
}
