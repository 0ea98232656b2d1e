// Package redisconn reads the Redis settings every service shares and opens
// the client: one address, a Cluster's nodes or Sentinels, with timeouts that
// bound every call, tracing when enabled and pool gauges in the metrics.
//
// Failing fast: every dial, read, write and wait for a pooled connection is
// bounded by REDIS_TIMEOUT (500 ms by default), a call is never retried
// (a retry would double the wait on a Redis that hangs), and with a breaker
// (WithBreaker) every command fails at once while the breaker's probe finds
// Redis unreachable.
//
// Errors: every error of a command, a reply from Redis included, is an
// outage of the store to the caller (Outage); only Unreachable ones count
// against the breaker.
package redisconn

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/redis/go-redis/extra/redisotel/v9"
	"github.com/redis/go-redis/v9"

	"github.com/liveproctor/workspaces/pkg/breaker"
	"github.com/liveproctor/workspaces/pkg/envconfig"
	"github.com/liveproctor/workspaces/pkg/fault"
	"github.com/liveproctor/workspaces/pkg/telemetry"
)

// ReadOptions reads REDIS_ADDR (one address, or a comma-separated list of
// Cluster nodes or Sentinels), REDIS_MASTER_NAME (selects Sentinel),
// REDIS_USERNAME, REDIS_PASSWORD, REDIS_DB, REDIS_TIMEOUT and REDIS_POOL_SIZE. REDIS_ADDR is
// required when required is set; otherwise an empty address list means the
// service runs without Redis.
func ReadOptions(r *envconfig.Reader, required bool) redis.UniversalOptions {
	timeout := r.Duration("REDIS_TIMEOUT", DefaultTimeout)
	opts := redis.UniversalOptions{
		Addrs:        r.List("REDIS_ADDR"),
		MasterName:   r.String("REDIS_MASTER_NAME", ""),
		Username:     r.String("REDIS_USERNAME", ""),
		Password:     r.String("REDIS_PASSWORD", ""),
		DB:           r.Int("REDIS_DB", 0, 0, 15),
		DialTimeout:  timeout,
		ReadTimeout:  timeout,
		WriteTimeout: timeout,
		PoolTimeout:  timeout,
		// go-redis's default pool is 10 connections per core: 20 here,
		// fewer than the calls a loaded replica has in flight, which then
		// queue for a connection (a tenth of the auth service's time to
		// take one went to that wait).
		PoolSize: r.Int("REDIS_POOL_SIZE", 64, 1, 10_000),
		// Commands and replies here are small (a login's script is well
		// under 1 KiB; larger replies are read past the buffer), so each
		// connection's buffers are 8 KiB instead of 32: 64 connections then
		// hold less than go-redis's 20 did, which matters with GOGC=400,
		// where every live MiB lets the heap grow by four more.
		ReadBufferSize:  8 << 10,
		WriteBufferSize: 8 << 10,
		// No retries (-1; 0 means go-redis's default of 3): against a Redis
		// that hangs each try waits the full timeout.
		MaxRetries: -1,
		// Reads and writes end with the call's deadline too, so a Redis
		// that hangs rather than refuses never holds a request past it.
		ContextTimeoutEnabled: true,
		// RESP2: nothing here uses what RESP3 adds (push notifications,
		// client-side caching), and with RESP3 go-redis looks for pending
		// push frames on the connection before and after every command,
		// which was a tenth of the auth service's CPU per login.
		Protocol: 2,
	}
	if required && len(opts.Addrs) == 0 {
		r.Required("REDIS_ADDR")
	}
	return opts
}

// DefaultTimeout is REDIS_TIMEOUT's default.
const DefaultTimeout = 500 * time.Millisecond

// Option changes how Open builds the client.
type Option func(redis.UniversalClient)

// WithBreaker sends every command and pipeline through b (built with
// Unreachable as its classifier, and probed by the caller): while b is
// open they fail at once with breaker.ErrOpen.
func WithBreaker(b *breaker.Breaker) Option {
	return func(c redis.UniversalClient) { c.AddHook(breakerHook{b}) }
}

// Unreachable reports whether a command's error may mean Redis cannot be
// reached: anything but a reply from Redis (redis.Nil, a script error).
//
// A reply that refuses the command is not: a Redis out of memory under
// noeviction (OOM) or a read-only replica (READONLY) still answers reads
// and PING, and an open breaker would fail those too, turning a store that
// takes no writes into one that serves nothing. Such replies are outages of
// the calls they answer (Outage), one call at a time.
func Unreachable(err error) bool {
	var reply redis.Error
	return !errors.Is(err, redis.Nil) && !errors.As(err, &reply)
}

// Outage is the error a caller gets for err, the error of a Redis command
// done for op: fault.Unavailable with message (HTTP 503 with Retry-After),
// whatever err is. redis.Nil is no error; callers handle it first.
//
// A reply is no exception. Redis refusing a command (OOM when full under
// noeviction, READONLY after a failover, LOADING, BUSY, MASTERDOWN,
// CLUSTERDOWN, TRYAGAIN, MISCONF when it cannot persist, or any other
// error reply) is, to the caller, the store out of service until time or
// an operator mends it, as much as a connection refused or timed out. A
// reply that is this code's own mistake (WRONGTYPE, a script's runtime
// error) is no business of the caller either; the cause is logged with the
// warning of every Unavailable answer.
func Outage(op string, err error, message string) error {
	return fault.Wrap(fault.Unavailable, fmt.Errorf("%s: %w", op, err), message)
}

// Open returns a client for opts, traced when tracing is on, with its pool
// reported in metrics.
func Open(opts redis.UniversalOptions, metrics *telemetry.Metrics, options ...Option) (redis.UniversalClient, error) {
	client := redis.NewUniversalClient(&opts)
	for _, o := range options {
		o(client)
	}
	if telemetry.TracingEnabled() {
		if err := redisotel.InstrumentTracing(client); err != nil {
			_ = client.Close()
			return nil, fmt.Errorf("trace Redis: %w", err)
		}
	}
	stats := func(read func(*redis.PoolStats) uint32) func() float64 {
		return func() float64 { return float64(read(client.PoolStats())) }
	}
	metrics.GaugeFunc("redis_pool_total_connections", "Connections open to Redis.", stats(func(p *redis.PoolStats) uint32 { return p.TotalConns }))
	metrics.GaugeFunc("redis_pool_idle_connections", "Idle connections to Redis.", stats(func(p *redis.PoolStats) uint32 { return p.IdleConns }))
	metrics.GaugeFunc("redis_pool_timeouts", "Times a caller waited for a Redis connection in vain.", stats(func(p *redis.PoolStats) uint32 { return p.Timeouts }))
	return client, nil
}

// breakerHook runs commands through a breaker.
type breakerHook struct{ b *breaker.Breaker }

func (h breakerHook) DialHook(next redis.DialHook) redis.DialHook { return next }

func (h breakerHook) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		err := h.b.Do(ctx, func(ctx context.Context) error { return next(ctx, cmd) })
		if errors.Is(err, breaker.ErrOpen) {
			cmd.SetErr(err) // callers read the command's error
		}
		return err
	}
}

func (h breakerHook) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		err := h.b.Do(ctx, func(ctx context.Context) error { return next(ctx, cmds) })
		if errors.Is(err, breaker.ErrOpen) {
			for _, cmd := range cmds {
				cmd.SetErr(err)
			}
		}
		return err
	}
}
