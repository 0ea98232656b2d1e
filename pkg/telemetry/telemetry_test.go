package telemetry_test

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/liveproctor/workspaces/pkg/telemetry"
)

func TestNewLoggerLevels(t *testing.T) {
	t.Setenv("LOG_LEVEL", "WARN")
	logger, _, err := telemetry.NewLogger("svc")
	if err != nil {
		t.Fatal(err)
	}
	if logger.Enabled(context.Background(), slog.LevelInfo) || !logger.Enabled(context.Background(), slog.LevelWarn) {
		t.Fatal("LOG_LEVEL=WARN not honoured")
	}
	t.Setenv("LOG_LEVEL", "loud")
	if _, _, err := telemetry.NewLogger("svc"); err == nil || !strings.Contains(err.Error(), "LOG_LEVEL") {
		t.Fatalf("a bad LOG_LEVEL: %v", err)
	}
}

func TestTracingIsOffUnlessAnEndpointIsSet(t *testing.T) {
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "")
	t.Setenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "")
	if telemetry.TracingEnabled() || len(telemetry.GRPCServerOptions()) != 0 {
		t.Fatal("tracing on without an endpoint")
	}
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "http://127.0.0.1:4317")
	if !telemetry.TracingEnabled() || len(telemetry.GRPCDialOptions()) != 1 {
		t.Fatal("tracing off with an endpoint")
	}
	t.Setenv("OTEL_TRACES_EXPORTER", "none")
	if telemetry.TracingEnabled() {
		t.Fatal("OTEL_TRACES_EXPORTER=none not honoured")
	}
}

func TestMetricsServer(t *testing.T) {
	m := telemetry.NewMetrics()
	m.ObserveHTTP("GET", "/api/workspace/{id=*}", 200, 3*time.Millisecond)
	m.GaugeFunc("pool_open", "open connections", func() float64 { return 7 })
	srv, err := telemetry.ServeMetrics("127.0.0.1:0", m, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close(context.Background())
	resp, err := http.Get("http://" + srv.Addr() + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	for _, want := range []string{
		`http_request_duration_seconds_count{code="200",method="GET",route="/api/workspace/{id=*}"} 1`,
		"pool_open 7",
		"process_resident_memory_bytes",
	} {
		if !strings.Contains(string(body), want) {
			t.Errorf("/metrics lacks %q", want)
		}
	}
	off, err := telemetry.ServeMetrics("", m, slog.New(slog.DiscardHandler))
	if err != nil || off.Addr() != "" {
		t.Fatalf("an empty address serves %q, %v", off.Addr(), err)
	}
}
