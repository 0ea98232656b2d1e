package server

import (
	"context"
	"log/slog"
	"net/http"
	"runtime/debug"
	"strings"
	"time"

	"github.com/liveproctor/workspaces/gateway/internal/httperr"
	"github.com/liveproctor/workspaces/gateway/internal/lti"
	"github.com/liveproctor/workspaces/gateway/internal/portal"
	"github.com/liveproctor/workspaces/gateway/internal/reqstate"
	"github.com/liveproctor/workspaces/pkg/fault"
	"github.com/liveproctor/workspaces/pkg/telemetry"
)

// accessLog writes one line per request: method, path, status, size,
// duration and request id. Headers (Authorization among them) and query
// strings are never logged.
func accessLog(logger *slog.Logger, metrics *telemetry.Metrics, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		sw := reqstate.TrackStatus(w, r)
		next.ServeHTTP(sw, r)
		status := sw.Status()
		if status == 0 {
			status = http.StatusOK
		}
		route := reqstate.From(r.Context()).Route
		if route == "" {
			route = "unmatched"
		}
		took := time.Since(start)
		if metrics != nil {
			metrics.ObserveHTTP(r.Method, route, status, took)
		}
		ctx := r.Context()
		if !logger.Enabled(ctx, slog.LevelInfo) {
			return
		}
		// The record is built here rather than by logger.LogAttrs, which
		// walks the stack for the caller's program counter on every line;
		// the gateway's loggers never print the source, so a request need
		// not pay for it.
		rec := slog.NewRecord(time.Now(), slog.LevelInfo, "request", 0)
		rec.AddAttrs(
			slog.String("method", r.Method),
			slog.String("path", loggedPath(r.URL.Path)),
			slog.String("route", route),
			slog.Int("status", status),
			slog.Int64("bytes", sw.Bytes()),
			slog.Float64("duration_ms", float64(took.Microseconds())/1000),
			slog.String("request_id", reqstate.ID(ctx)),
		)
		_ = logger.Handler().Handle(ctx, rec)
	})
}

// recoverPanics turns a panic into a logged 500 INTERNAL in the error shape,
// when nothing has been sent yet. http.ErrAbortHandler keeps its meaning.
func recoverPanics(logger *slog.Logger, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		sw := reqstate.TrackStatus(w, r)
		defer func() {
			v := recover()
			if v == nil {
				return
			}
			if v == http.ErrAbortHandler {
				panic(v)
			}
			logger.Error("panic serving request", "request_id", reqstate.ID(r.Context()),
				"method", r.Method, "path", loggedPath(r.URL.Path), "panic", v, "stack", string(debug.Stack()))
			if !sw.Started() {
				httperr.Write(sw, r, fault.Internal, httperr.MsgInternal)
			}
		}()
		next.ServeHTTP(sw, r)
	})
}

// withTimeout bounds each request, and so its backend calls, by timeout.
// grpc-gateway turns the expired deadline into DEADLINE_EXCEEDED (504).
//
// The deadline covers reading the body as well: a body still arriving when
// it passes (a client that sent two bytes of a hundred, then nothing) has
// its pending read cut short through the connection's read deadline, and
// the error handler answers 408 (limitBody notes why the read failed). The
// connection's deadline is only touched then, never once the body is read:
// net/http keeps reading a finished request's connection in the
// background, and a failed read there would cancel the request.
func withTimeout(timeout time.Duration, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ctx, cancel := context.WithTimeout(r.Context(), timeout)
		defer cancel()
		if body, ok := r.Body.(*reqstate.Body); ok {
			rc := http.NewResponseController(w)
			stop := context.AfterFunc(ctx, func() {
				if !body.Ended() {
					_ = rc.SetReadDeadline(time.Now())
				}
			})
			defer stop() // before cancel, which would run it
		}
		next.ServeHTTP(w, r.WithContext(ctx))
	})
}

// loggedPath is path as logs may show it: the secret of a registration
// link or a portal link (its last segment) is left out.
func loggedPath(path string) string {
	for _, prefix := range []string{lti.RegisterPathPrefix, portal.OpenPathPrefix} {
		if strings.HasPrefix(path, prefix) {
			return prefix + "…"
		}
	}
	return path
}
