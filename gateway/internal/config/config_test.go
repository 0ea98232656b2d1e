package config_test

import (
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/liveproctor/workspaces/gateway/internal/config"
	"github.com/liveproctor/workspaces/pkg/envconfig"
	"github.com/liveproctor/workspaces/pkg/grpcmw"
)

func TestDefaults(t *testing.T) {
	cfg, err := config.Read(envconfig.FromMap(nil))
	if err != nil {
		t.Fatal(err)
	}
	want := config.Config{
		Addr: ":8080", MetricsAddr: ":9466", WorkspaceServiceAddr: "127.0.0.1:9090", AuthServiceAddr: "127.0.0.1:9091",
		GRPC:           grpcmw.ClientSettings{MinResolutionInterval: 30 * time.Second},
		RequestTimeout: 10 * time.Second, MaxBodyBytes: 1 << 20, ShutdownTimeout: 15 * time.Second,
		CORSAllowedOrigins: []string{"*"},
	}
	if !reflect.DeepEqual(cfg, want) {
		t.Errorf("got %+v, want %+v", cfg, want)
	}
}

func TestValuesAndErrors(t *testing.T) {
	cfg, err := config.Read(envconfig.FromMap(map[string]string{
		"GATEWAY_ADDR": "127.0.0.1:1", "REQUEST_TIMEOUT": "2s", "MAX_BODY_BYTES": "10", "METRICS_ADDR": "",
	}))
	if err != nil || cfg.Addr != "127.0.0.1:1" || cfg.MetricsAddr != "" || cfg.RequestTimeout != 2*time.Second || cfg.MaxBodyBytes != 10 {
		t.Fatalf("got %+v, %v", cfg, err)
	}
	_, err = config.Read(envconfig.FromMap(map[string]string{
		"GATEWAY_ADDR": "nope", "SHUTDOWN_TIMEOUT": "-1s", "MAX_BODY_BYTES": "0", "OTEL_TRACES_EXPORTER": "console",
		"METRICS_ADDR": "everywhere", "WORKSPACE_SERVICE_ADDR": "dns:///workspace", "GRPC_DNS_MIN_RESOLUTION_INTERVAL": "often",
	}))
	for _, name := range []string{"GATEWAY_ADDR", "SHUTDOWN_TIMEOUT", "MAX_BODY_BYTES", "OTEL_TRACES_EXPORTER", "METRICS_ADDR",
		"WORKSPACE_SERVICE_ADDR", "GRPC_DNS_MIN_RESOLUTION_INTERVAL"} {
		if err == nil || !strings.Contains(err.Error(), name) {
			t.Errorf("error %v does not name %s", err, name)
		}
	}
}

func TestCORSAllowedOrigins(t *testing.T) {
	cfg, err := config.Read(envconfig.FromMap(map[string]string{
		"CORS_ALLOWED_ORIGINS": " https://App.Example.com/ , http://localhost:3000,*",
	}))
	want := []string{"https://app.example.com", "http://localhost:3000", "*"}
	if err != nil || !reflect.DeepEqual(cfg.CORSAllowedOrigins, want) {
		t.Errorf("got %q, %v", cfg.CORSAllowedOrigins, err)
	}
	for _, bad := range []string{"example.com", "https://a.example.com/path", "ftp://a.example.com", "https://u@a.example.com", "https://a.example.com?x=1", "null"} {
		_, err := config.Read(envconfig.FromMap(map[string]string{"CORS_ALLOWED_ORIGINS": "https://ok.example.com," + bad}))
		if err == nil || !strings.Contains(err.Error(), "CORS_ALLOWED_ORIGINS") {
			t.Errorf("%q: error %v", bad, err)
		}
	}
}
