package telemetry

import (
	"errors"
	"log/slog"
	"net"
	"net/http"
	"net/http/pprof"
	"os"
	"time"
)

// ServePprof serves Go's profiling endpoints (/debug/pprof/) on PPROF_ADDR
// when it is set, for `go tool pprof`. It is off by default; keep it on a
// loopback or otherwise private address.
func ServePprof(logger *slog.Logger) error {
	addr := os.Getenv("PPROF_ADDR")
	if addr == "" {
		return nil
	}
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
