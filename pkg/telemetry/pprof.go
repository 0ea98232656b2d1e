package telemetry

import (
	"errors"
	"log/slog"
	"net"
	"net/http"
	"net/http/pprof"
	"runtime"
	"time"
)

// Sampling of the mutex and block profiles while the profiling endpoints
// are served: one contention event in mutexFraction, and blocking events
// about one per blockRate nanoseconds blocked. Both cost little at these
// rates, and nothing when profiling is off.
const (
	mutexFraction = 100
	blockRate     = 10_000
)

// ServePprof serves Go's profiling endpoints (/debug/pprof/) on addr, for
// `go tool pprof` (the mutex and block profiles included, sampled as
// above) and `go tool trace`; an empty addr serves nothing. Keep it on a
// loopback or otherwise private address.
func ServePprof(addr string, logger *slog.Logger) error {
	if addr == "" {
		return nil
	}
	runtime.SetMutexProfileFraction(mutexFraction)
	runtime.SetBlockProfileRate(blockRate)
	lis, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/debug/pprof/", pprof.Index)
	mux.HandleFunc("/debug/pprof/cmdline", pprof.Cmdline)
	mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
	mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	go func() {
		if err := srv.Serve(lis); err != nil && !errors.Is(err, http.ErrServerClosed) {
			logger.Error("pprof server stopped", "error", err.Error())
		}
	}()
	logger.Info("profiling endpoints on", "addr", lis.Addr().String())
	return nil
}
