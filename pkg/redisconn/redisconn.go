// Package redisconn reads the Redis settings every service shares and opens
// the client: one address, a Cluster's nodes or Sentinels, with timeouts that
// bound every call, tracing when enabled and pool gauges in the metrics.
package redisconn

import (
	"fmt"
	"time"

	"github.com/redis/go-redis/extra/redisotel/v9"
	"github.com/redis/go-redis/v9"

	"github.com/liveproctor/workspaces/pkg/envconfig"
	"github.com/liveproctor/workspaces/pkg/telemetry"
)

// ReadOptions reads REDIS_ADDR (one address, or a comma-separated list of
// Cluster nodes or Sentinels), REDIS_MASTER_NAME (selects Sentinel),
// REDIS_USERNAME, REDIS_PASSWORD, REDIS_DB and REDIS_TIMEOUT. REDIS_ADDR is
// required when required is set; otherwise an empty address list means the
// service runs without Redis.
func ReadOptions(r *envconfig.Reader, required bool) redis.UniversalOptions {
	timeout := r.Duration("REDIS_TIMEOUT", time.Second)
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
		MaxRetries:   1,
		// Reads and writes end with the call's deadline too, so a Redis
		// that hangs rather than refuses never holds a request past it.
		ContextTimeoutEnabled: true,
	}
	if required && len(opts.Addrs) == 0 {
		r.Required("REDIS_ADDR")
	}
	return opts
}

// Open returns a client for opts, traced when tracing is on, with its pool
// reported in metrics.
func Open(opts redis.UniversalOptions, metrics *telemetry.Metrics) (redis.UniversalClient, error) {
	client := redis.NewUniversalClient(&opts)
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
