// Package config reads the gateway's settings from the environment.
package config

import (
	"time"

	"github.com/liveproctor/workspaces/pkg/envconfig"
)

// Config is everything the gateway needs to start.
type Config struct {
	// Addr is the HTTP listen address (GATEWAY_ADDR).
	Addr string
	// WorkspaceServiceAddr is the workspace service's gRPC address
	// (WORKSPACE_SERVICE_ADDR).
	WorkspaceServiceAddr string
	// AuthServiceAddr is the auth service's gRPC address (AUTH_SERVICE_ADDR).
	AuthServiceAddr string
	// RequestTimeout bounds each request, including its backend call
	// (REQUEST_TIMEOUT).
	RequestTimeout time.Duration
	// MaxBodyBytes is the largest request body accepted; larger ones get
	// 413 (MAX_BODY_BYTES).
	MaxBodyBytes int64
	// ShutdownTimeout bounds the wait for in-flight requests on shutdown
	// (SHUTDOWN_TIMEOUT).
	ShutdownTimeout time.Duration
}

// Defaults for every setting.
const (
	DefaultAddr                 = ":8080"
	DefaultWorkspaceServiceAddr = "127.0.0.1:9090"
	DefaultAuthServiceAddr      = "127.0.0.1:9091"
	DefaultRequestTimeout       = 10 * time.Second
	DefaultMaxBodyBytes         = 1 << 20
	DefaultShutdownTimeout      = 15 * time.Second
)

// maxMaxBodyBytes caps MAX_BODY_BYTES: bodies are buffered in memory.
const maxMaxBodyBytes = 64 << 20

// Load reads the configuration from the process environment.
func Load() (Config, error) { return Read(envconfig.New()) }

// Read reads the configuration through r and reports every bad value at once.
func Read(r *envconfig.Reader) (Config, error) {
	cfg := Config{
		Addr:                 r.Addr("GATEWAY_ADDR", DefaultAddr),
		WorkspaceServiceAddr: r.Addr("WORKSPACE_SERVICE_ADDR", DefaultWorkspaceServiceAddr),
		AuthServiceAddr:      r.Addr("AUTH_SERVICE_ADDR", DefaultAuthServiceAddr),
		RequestTimeout:       r.Duration("REQUEST_TIMEOUT", DefaultRequestTimeout),
		MaxBodyBytes:         int64(r.Int("MAX_BODY_BYTES", DefaultMaxBodyBytes, 1, maxMaxBodyBytes)),
		ShutdownTimeout:      r.Duration("SHUTDOWN_TIMEOUT", DefaultShutdownTimeout),
	}
	return cfg, r.Err()
}
