package telemetry

import (
	"context"
	"errors"
	"log/slog"
	"net"
	"net/http"
	"time"
)

// MetricsServer serves /metrics on its own address (METRICS_ADDR), apart
// from the port a binary serves its API on.
type MetricsServer struct {
	srv *http.Server
	lis net.Listener
}

// ServeMetrics listens on addr and serves m; an empty addr serves nothing.
func ServeMetrics(addr string, m *Metrics, logger *slog.Logger) (*MetricsServer, error) {
	if addr == "" {
		return &MetricsServer{}, nil
	}
	lis, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, err
	}
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", m.Handler())
	s := &MetricsServer{srv: &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}, lis: lis}
	go func() {
		if err := s.srv.Serve(lis); err != nil && !errors.Is(err, http.ErrServerClosed) {
			logger.Error("metrics server stopped", "error", err.Error())
		}
	}()
	return s, nil
}

// Addr is where metrics are served, or "" when they are not.
func (s *MetricsServer) Addr() string {
	if s.lis == nil {
		return ""
	}
	return s.lis.Addr().String()
}

// Close stops serving.
func (s *MetricsServer) Close(ctx context.Context) error {
	if s.srv == nil {
		return nil
	}
	return s.srv.Shutdown(ctx)
}
