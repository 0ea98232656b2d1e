package service_test

import (
	"strings"
	"testing"
	"time"

	"github.com/liveproctor/workspaces/pkg/envconfig"
	"github.com/liveproctor/workspaces/services/auth/internal/service"
)

func TestConfigNamesEveryBadVariable(t *testing.T) {
	_, err := service.ConfigFromEnv(envconfig.FromMap(map[string]string{
		"AUTH_GRPC_ADDR": "nine-oh-nine-one",
		"REDIS_TIMEOUT":  "soon",
		"REDIS_DB":       "99",
		"LOG_LEVEL":      "loud",
	}))
	if err == nil {
		t.Fatal("a bad configuration was accepted")
	}
	for _, name := range []string{"AUTH_GRPC_ADDR", "REDIS_TIMEOUT", "REDIS_DB", "REDIS_ADDR", "SERVICE_APP_KEY", "LOG_LEVEL"} {
		if !strings.Contains(err.Error(), name) {
			t.Errorf("the error does not name %s: %v", name, err)
		}
	}
}

func TestConfigDefaultsAndCluster(t *testing.T) {
	cfg, err := service.ConfigFromEnv(envconfig.FromMap(map[string]string{
		"REDIS_ADDR":           "10.0.0.1:6379, 10.0.0.2:6379,10.0.0.3:6379",
		"BOOTSTRAP_APP_KEY":    "k",
		"BOOTSTRAP_APP_SECRET": "s",
	}))
	if err != nil {
		t.Fatal(err)
	}
	if len(cfg.Redis.Addrs) != 3 || cfg.ServiceAppKey != "k" || cfg.GRPCAddr != ":9091" ||
		cfg.Redis.ReadTimeout != time.Second || !cfg.Redis.ContextTimeoutEnabled || cfg.AccessCacheTTL != 5*time.Second {
		t.Fatalf("config %+v", cfg)
	}
}
