// Package config reads the gateway's settings from the environment.
package config

import (
	"net/url"
	"strings"
	"time"

	"github.com/liveproctor/workspaces/pkg/clientaddr"
	"github.com/liveproctor/workspaces/pkg/envconfig"
	"github.com/liveproctor/workspaces/pkg/grpcmw"
	"github.com/liveproctor/workspaces/pkg/telemetry"
)

// Config is every setting of the gateway; see the README's table.
type Config struct {
	// Addr is the HTTP listen address (GATEWAY_ADDR).
	Addr string
	// MetricsAddr is where Prometheus /metrics is served, apart from the
	// public REST port; empty: not served (METRICS_ADDR, default :9466).
	MetricsAddr string
	// WorkspaceServiceAddr is the workspace service's gRPC target
	// (WORKSPACE_SERVICE_ADDR): host:port, or dns:///name:port for every
	// replica behind the name.
	WorkspaceServiceAddr string
	// AuthServiceAddr is the auth service's gRPC target (AUTH_SERVICE_ADDR).
	AuthServiceAddr string
	// GRPC is how the backends' names are resolved
	// (GRPC_DNS_MIN_RESOLUTION_INTERVAL).
	GRPC grpcmw.ClientSettings
	// RequestTimeout bounds each request, including its backend call
	// (REQUEST_TIMEOUT).
	RequestTimeout time.Duration
	// MaxBodyBytes is the largest request body accepted; larger ones get
	// 413 (MAX_BODY_BYTES).
	MaxBodyBytes int64
	// ShutdownTimeout bounds the wait for in-flight requests on shutdown
	// (SHUTDOWN_TIMEOUT).
	ShutdownTimeout time.Duration
	// DrainDelay is how long the gateway keeps serving, with /readyz
	// answering 503, between SIGTERM and closing its listener, so that a
	// load balancer stops sending it new requests first (DRAIN_DELAY;
	// default 0; a few seconds on Kubernetes).
	DrainDelay time.Duration
	// CORSAllowedOrigins lists the origins whose pages may call
	// /api/sdk/session from a browser, as scheme://host[:port]; "*" allows
	// any origin (CORS_ALLOWED_ORIGINS, comma-separated, default "*").
	CORSAllowedOrigins []string
	// Proxies are the load balancers in front of the gateway trusted to
	// report the client's address in X-Forwarded-For (TRUSTED_PROXIES,
	// comma-separated CIDRs; default none: the TCP peer is the client).
	// The services count failed authentications per client address.
	Proxies clientaddr.Resolver
	// Telemetry is the log level, profiling and trace export (LOG_LEVEL,
	// PPROF_ADDR, OTEL_*).
	Telemetry telemetry.Settings
}

// TelemetrySettings is what lifecycle.Main sets the process up with.
func (c Config) TelemetrySettings() telemetry.Settings { return c.Telemetry }

// Defaults for every setting.
const (
	DefaultAddr                 = ":8080"
	DefaultMetricsAddr          = ":9466"
	DefaultWorkspaceServiceAddr = "127.0.0.1:9090"
	DefaultAuthServiceAddr      = "127.0.0.1:9091"
	DefaultRequestTimeout       = 10 * time.Second
	DefaultMaxBodyBytes         = 1 << 20
	DefaultShutdownTimeout      = 15 * time.Second
	// AnyOrigin in CORSAllowedOrigins allows every origin.
	AnyOrigin = "*"
)

// DefaultCORSAllowedOrigins is the default of CORS_ALLOWED_ORIGINS: any
// origin. The SDK session route takes a Bearer token, never cookies, so a
// foreign page learns nothing it did not already hold.
func DefaultCORSAllowedOrigins() []string { return []string{AnyOrigin} }

// maxMaxBodyBytes caps MAX_BODY_BYTES: bodies are buffered in memory.
const maxMaxBodyBytes = 64 << 20

// Read reads the configuration through r and reports every bad value at once.
func Read(r *envconfig.Reader) (Config, error) {
	cfg := Config{
		Addr:                 r.Addr("GATEWAY_ADDR", DefaultAddr),
		MetricsAddr:          r.OptionalAddr("METRICS_ADDR", DefaultMetricsAddr),
		WorkspaceServiceAddr: grpcmw.ReadTarget(r, "WORKSPACE_SERVICE_ADDR", DefaultWorkspaceServiceAddr),
		AuthServiceAddr:      grpcmw.ReadTarget(r, "AUTH_SERVICE_ADDR", DefaultAuthServiceAddr),
		GRPC:                 grpcmw.ReadClientSettings(r),
		RequestTimeout:       r.Duration("REQUEST_TIMEOUT", DefaultRequestTimeout),
		MaxBodyBytes:         int64(r.Int("MAX_BODY_BYTES", DefaultMaxBodyBytes, 1, maxMaxBodyBytes)),
		ShutdownTimeout:      r.Duration("SHUTDOWN_TIMEOUT", DefaultShutdownTimeout),
		DrainDelay:           r.Duration("DRAIN_DELAY", 0),
		CORSAllowedOrigins:   origins(r),
		Proxies:              proxies(r),
		Telemetry:            telemetry.ReadSettings(r),
	}
	return cfg, r.Err()
}

// proxies reads TRUSTED_PROXIES.
func proxies(r *envconfig.Reader) clientaddr.Resolver {
	p, err := clientaddr.NewResolver(r.List("TRUSTED_PROXIES"))
	if err != nil {
		r.Invalid("TRUSTED_PROXIES", "%v", err)
	}
	return p
}

// origins reads CORS_ALLOWED_ORIGINS, each "*" or scheme://host[:port]
// (http or https, no path, query or user), and returns them lower-cased, as
// browsers send them.
func origins(r *envconfig.Reader) []string {
	list := r.List("CORS_ALLOWED_ORIGINS")
	if len(list) == 0 {
		return DefaultCORSAllowedOrigins()
	}
	out := make([]string, 0, len(list))
	var bad []string
	for _, o := range list {
		if o == AnyOrigin {
			out = append(out, o)
			continue
		}
		o = strings.TrimSuffix(o, "/")
		u, err := url.Parse(o)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.User != nil ||
			u.Path != "" || u.RawQuery != "" || u.Fragment != "" || u.Opaque != "" || strings.HasSuffix(u.Host, ":") {
			bad = append(bad, o)
			continue
		}
		out = append(out, strings.ToLower(u.Scheme+"://"+u.Host))
	}
	if len(bad) > 0 {
		r.Invalid("CORS_ALLOWED_ORIGINS", "must be * or origins such as https://app.example.com, got %q", strings.Join(bad, ","))
		return nil
	}
	return out
}
