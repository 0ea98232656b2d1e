package telemetry

import (
	"log/slog"
	"net/url"

	"github.com/liveproctor/workspaces/pkg/envconfig"
)

// Settings are the telemetry settings of every binary. Each binary's
// configuration holds them, and lifecycle.Main applies them before the
// binary runs.
type Settings struct {
	LogLevel  slog.Level // LOG_LEVEL: debug, info (default), warn or error
	PprofAddr string     // PPROF_ADDR: serve /debug/pprof/ here; empty: off

	// ExportTraces is set by OTEL_EXPORTER_OTLP_ENDPOINT or
	// OTEL_EXPORTER_OTLP_TRACES_ENDPOINT, unless OTEL_TRACES_EXPORTER is
	// none: traces then go there over OTLP/gRPC. The exporter reads these
	// and the other standard OTEL_EXPORTER_OTLP_* variables (headers, TLS,
	// timeout) itself, as the OpenTelemetry SDK documents; this only checks
	// the ones the SDK would otherwise ignore or misread without a word.
	ExportTraces bool
}

// ReadSettings reads the telemetry settings through r.
func ReadSettings(r *envconfig.Reader) Settings {
	s := Settings{PprofAddr: r.OptionalAddr("PPROF_ADDR", "")}
	if v := r.String("LOG_LEVEL", ""); v != "" {
		if err := s.LogLevel.UnmarshalText([]byte(v)); err != nil {
			r.Invalid("LOG_LEVEL", "must be debug, info, warn or error, got %q", v)
		}
	}

	endpoint := false
	for _, name := range []string{"OTEL_EXPORTER_OTLP_ENDPOINT", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"} {
		v := r.String(name, "")
		if v == "" {
			continue
		}
		endpoint = true
		// The SDK drops an endpoint it cannot parse (10.0.0.1:4317 is one)
		// and exports to localhost:4317 instead.
		if _, err := url.Parse(v); err != nil {
			r.Invalid(name, "must be a URL such as http://collector:4317, got %q", v)
		}
	}
	switch v := r.String("OTEL_TRACES_EXPORTER", "otlp"); v {
	case "otlp":
		s.ExportTraces = endpoint
	case "none":
	default:
		r.Invalid("OTEL_TRACES_EXPORTER", "must be otlp or none (traces are exported over OTLP only), got %q", v)
	}
	if s.ExportTraces {
		// The exporter speaks gRPC whatever these say.
		for _, name := range []string{"OTEL_EXPORTER_OTLP_PROTOCOL", "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL"} {
			if v := r.String(name, "grpc"); v != "grpc" {
				r.Invalid(name, "must be grpc (traces are exported over OTLP/gRPC only), got %q", v)
			}
		}
	}
	return s
}
