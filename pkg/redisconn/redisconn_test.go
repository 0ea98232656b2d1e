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
	"github.com/liveproctor/workspaces/pkg/redisconn"
	"github.com/liveproctor/workspaces/pkg/telemetry"
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
