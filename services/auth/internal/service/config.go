// Package service builds the auth service from its configuration. It is the
// only package that imports the adapters.
package service

import (
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/liveproctor/workspaces/pkg/envconfig"
	"github.com/liveproctor/workspaces/pkg/grpcmw"
	"github.com/liveproctor/workspaces/pkg/ratelimit"
	"github.com/liveproctor/workspaces/pkg/redisconn"
	"github.com/liveproctor/workspaces/pkg/telemetry"
)

// Config is every setting of the auth service; see the README's table.
type Config struct {
	GRPCAddr    string // AUTH_GRPC_ADDR
	MetricsAddr string // METRICS_ADDR: Prometheus /metrics; empty: off

	// Redis: REDIS_ADDR (one address, or a comma-separated list of Cluster
	// nodes or Sentinels), REDIS_MASTER_NAME (selects Sentinel),
	// REDIS_USERNAME, REDIS_PASSWORD, REDIS_DB, REDIS_TIMEOUT, REDIS_POOL_SIZE.
	Redis redis.UniversalOptions

	WorkspaceServiceAddr string // WORKSPACE_SERVICE_ADDR: host:port, or dns:///name:port for every replica
	// GRPCServer bounds the age of the connections clients make to this
	// service (GRPC_MAX_CONNECTION_AGE, GRPC_MAX_CONNECTION_AGE_GRACE);
	// GRPCClient is how the workspace service's name is resolved
	// (GRPC_DNS_MIN_RESOLUTION_INTERVAL).
	GRPCServer grpcmw.ServerSettings
	GRPCClient grpcmw.ClientSettings
	// ServiceAppKey/Secret is the key pair of the root workspace presented
	// when the service checks a token's workspace on its own behalf:
	// SERVICE_APP_KEY and SERVICE_APP_SECRET, or else the root's bootstrap
	// pair, BOOTSTRAP_APP_KEY and BOOTSTRAP_APP_SECRET, which the workspace
	// service ensures on every start. A deployment that gives both services
	// the bootstrap pair (make run, deploy/compose.yaml) needs no other.
	ServiceAppKey    string
	ServiceAppSecret string

	CallTimeout     time.Duration // AUTH_CALL_TIMEOUT: bound of one gRPC call
	AccessCacheTTL  time.Duration // ACCESS_CACHE_TTL: reuse of a login's access check
	AccessCacheSize int           // ACCESS_CACHE_SIZE
	ShutdownTimeout time.Duration // SHUTDOWN_TIMEOUT

	// Limits: RATE_LIMIT, RATE_LIMIT_BURST, AUTH_FAILURE_*, TRUSTED_PROXIES.
	Limits ratelimit.Settings

	Telemetry telemetry.Settings // LOG_LEVEL, PPROF_ADDR, OTEL_*
}

// TelemetrySettings is what lifecycle.Main sets the process up with.
func (c Config) TelemetrySettings() telemetry.Settings { return c.Telemetry }

// ConfigFromEnv reads the configuration, reporting every bad variable by name.
func ConfigFromEnv(r *envconfig.Reader) (Config, error) {
	cfg := Config{
		GRPCAddr:             r.Addr("AUTH_GRPC_ADDR", ":9091"),
		MetricsAddr:          r.OptionalAddr("METRICS_ADDR", ":9465"),
		Redis:                redisconn.ReadOptions(r, true),
		WorkspaceServiceAddr: grpcmw.ReadTarget(r, "WORKSPACE_SERVICE_ADDR", "127.0.0.1:9090"),
		GRPCServer:           grpcmw.ReadServerSettings(r),
		GRPCClient:           grpcmw.ReadClientSettings(r),
		CallTimeout:          r.Duration("AUTH_CALL_TIMEOUT", 5*time.Second),
		AccessCacheTTL:       r.Duration("ACCESS_CACHE_TTL", 5*time.Second),
		AccessCacheSize:      r.Int("ACCESS_CACHE_SIZE", 10000, 1, 10_000_000),
		ShutdownTimeout:      r.Duration("SHUTDOWN_TIMEOUT", 15*time.Second),
		Limits:               ratelimit.ReadSettings(r, ratelimit.ServiceTrustedProxies),
		Telemetry:            telemetry.ReadSettings(r),
	}
	var given bool
	cfg.ServiceAppKey, cfg.ServiceAppSecret, given = r.Pair("SERVICE_APP_KEY", "SERVICE_APP_SECRET")
	if !given {
		cfg.ServiceAppKey, cfg.ServiceAppSecret, given = r.Pair("BOOTSTRAP_APP_KEY", "BOOTSTRAP_APP_SECRET")
	}
	if !given {
		r.Invalid("SERVICE_APP_KEY", "is required (with SERVICE_APP_SECRET), unless BOOTSTRAP_APP_KEY and BOOTSTRAP_APP_SECRET are set")
	}
	return cfg, r.Err()
}
