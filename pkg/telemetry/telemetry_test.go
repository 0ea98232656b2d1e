package telemetry_test

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/liveproctor/workspaces/pkg/envconfig"
	"github.com/liveproctor/workspaces/pkg/telemetry"
)

func TestReadSettings(t *testing.T) {
	cases := []struct {
		name string
		env  map[string]string
		want telemetry.Settings
	}{
		{"defaults", nil, telemetry.Settings{LogLevel: slog.LevelInfo}},
		{"level in any case", map[string]string{"LOG_LEVEL": "WARN"}, telemetry.Settings{LogLevel: slog.LevelWarn}},
		{"profiling", map[string]string{"PPROF_ADDR": "127.0.0.1:0"}, telemetry.Settings{PprofAddr: "127.0.0.1:0"}},
		{"an endpoint exports", map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://collector:4317"}, telemetry.Settings{ExportTraces: true}},
		{"a traces endpoint exports", map[string]string{"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "collector:4317", "OTEL_EXPORTER_OTLP_PROTOCOL": "grpc"}, telemetry.Settings{ExportTraces: true}},
		{"none wins over an endpoint", map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://collector:4317", "OTEL_TRACES_EXPORTER": "none"}, telemetry.Settings{}},
		{"a protocol without an endpoint is no export", map[string]string{"OTEL_EXPORTER_OTLP_PROTOCOL": "http/protobuf"}, telemetry.Settings{}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := envconfig.FromMap(c.env)
			if got := telemetry.ReadSettings(r); got != c.want || r.Err() != nil {
				t.Fatalf("got %+v, %v; want %+v", got, r.Err(), c.want)
			}
		})
	}
}

func TestReadSettingsNamesEveryBadVariable(t *testing.T) {
	r := envconfig.FromMap(map[string]string{
		"LOG_LEVEL":                   "loud",
		"PPROF_ADDR":                  "everywhere",
		"OTEL_EXPORTER_OTLP_ENDPOINT": "10.0.0.1:4317", // no scheme: not a URL
		"OTEL_EXPORTER_OTLP_PROTOCOL": "http/protobuf",
	})
	telemetry.ReadSettings(r)
	for _, name := range []string{"LOG_LEVEL", "PPROF_ADDR", "OTEL_EXPORTER_OTLP_ENDPOINT", "OTEL_EXPORTER_OTLP_PROTOCOL"} {
		if err := r.Err(); err == nil || !strings.Contains(err.Error(), name) {
			t.Errorf("error %v does not name %s", err, name)
		}
	}
	r = envconfig.FromMap(map[string]string{"OTEL_TRACES_EXPORTER": "zipkin"})
	telemetry.ReadSettings(r)
	if err := r.Err(); err == nil || !strings.Contains(err.Error(), "OTEL_TRACES_EXPORTER") {
		t.Errorf("an exporter the binaries lack: %v", err)
	}
}

func TestInstrumentationOnlyWhileExporting(t *testing.T) {
	ctx := context.Background()
	stop, err := telemetry.StartTracing(ctx, "svc", false)
	if err != nil {
		t.Fatal(err)
	}
	if telemetry.TracingEnabled() || len(telemetry.GRPCServerOptions()) != 0 {
		t.Fatal("instrumented without an export")
	}
	if err := stop(ctx); err != nil {
		t.Fatal(err)
	}

	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "http://127.0.0.1:1") // never dialled: nothing is exported
	stop, err = telemetry.StartTracing(ctx, "svc", true)
	if err != nil {
		t.Fatal(err)
	}
	if !telemetry.TracingEnabled() || len(telemetry.GRPCDialOptions()) != 1 {
		t.Fatal("not instrumented while exporting")
	}
	if err := stop(ctx); err != nil {
		t.Fatal(err)
	}
	if telemetry.TracingEnabled() {
		t.Fatal("instrumented after the export stopped")
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
