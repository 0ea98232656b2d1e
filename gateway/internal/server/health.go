package server

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"google.golang.org/grpc"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"

	"github.com/liveproctor/workspaces/gateway/internal/httperr"
	"github.com/liveproctor/workspaces/pkg/fault"
)

// readinessTimeout bounds each backend's health check.
const readinessTimeout = 2 * time.Second

// backend is a gRPC service the gateway depends on.
type backend struct {
	name   string
	conn   *grpc.ClientConn
	health healthpb.HealthClient
}

func newBackend(name string, conn *grpc.ClientConn) backend {
	return backend{name: name, conn: conn, health: healthpb.NewHealthClient(conn)}
}

// serving reports whether the backend answers its overall health check
// with SERVING within readinessTimeout.
func (b backend) serving(ctx context.Context) bool {
	ctx, cancel := context.WithTimeout(ctx, readinessTimeout)
	defer cancel()
	resp, err := b.health.Check(ctx, &healthpb.HealthCheckRequest{})
	return err == nil && resp.GetStatus() == healthpb.HealthCheckResponse_SERVING
}

// healthz answers 200 while the process serves HTTP at all.
func healthz(w http.ResponseWriter, _ *http.Request, _ map[string]string) {
	writeStatusOK(w)
}

// readyz answers 200 when every backend is serving, else 503 naming those
// that are not. Backends are checked in parallel.
func readyz(draining *atomic.Bool, backends []backend) func(http.ResponseWriter, *http.Request, map[string]string) {
	return func(w http.ResponseWriter, r *http.Request, _ map[string]string) {
		if draining.Load() {
			httperr.Write(w, r, fault.Unavailable, "not ready: shutting down")
			return
		}
		down := make([]bool, len(backends))
		var wg sync.WaitGroup
		for i, b := range backends {
			wg.Go(func() { down[i] = !b.serving(r.Context()) })
		}
		wg.Wait()
		var names []string
		for i, b := range backends {
			if down[i] {
				names = append(names, b.name)
			}
		}
		if len(names) == 0 {
			writeStatusOK(w)
			return
		}
		httperr.Write(w, r, fault.Unavailable, fmt.Sprintf("not ready: %s not serving", strings.Join(names, ", ")))
	}
}

func writeStatusOK(w http.ResponseWriter) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write([]byte(`{"status":"ok"}` + "\n"))
}
