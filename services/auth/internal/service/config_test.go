package service_test

import (
	"maps"
	"strings"
	"testing"
	"time"

	"github.com/liveproctor/workspaces/pkg/envconfig"
	"github.com/liveproctor/workspaces/pkg/redisconn"
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
		cfg.Redis.ReadTimeout != redisconn.DefaultTimeout || cfg.Redis.MaxRetries != -1 || !cfg.Redis.ContextTimeoutEnabled || cfg.AccessCacheTTL != 5*time.Second {
		t.Fatalf("config %+v", cfg)
	}
}

// The service's own key pair is SERVICE_APP_KEY/SECRET, or else the root's
// bootstrap pair; half of a pair is refused rather than mixed with the other.
func TestConfigServiceKeyPair(t *testing.T) {
	base := map[string]string{"REDIS_ADDR": "127.0.0.1:6379", "BOOTSTRAP_APP_KEY": "boot-k", "BOOTSTRAP_APP_SECRET": "boot-s"}
	with := func(extra map[string]string) map[string]string {
		env := maps.Clone(base)
		maps.Copy(env, extra)
		return env
	}
	cases := []struct {
		name             string
		env              map[string]string
		key, secret, bad string
	}{
		{"the bootstrap pair by default", base, "boot-k", "boot-s", ""},
		{"its own pair", with(map[string]string{"SERVICE_APP_KEY": "svc-k", "SERVICE_APP_SECRET": "svc-s"}), "svc-k", "svc-s", ""},
		{"half its own pair", with(map[string]string{"SERVICE_APP_KEY": "svc-k"}), "", "", "SERVICE_APP_SECRET"},
		{"half the bootstrap pair", map[string]string{"REDIS_ADDR": "127.0.0.1:6379", "BOOTSTRAP_APP_KEY": "boot-k"}, "", "", "BOOTSTRAP_APP_SECRET"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cfg, err := service.ConfigFromEnv(envconfig.FromMap(c.env))
			if c.bad != "" {
				if err == nil || !strings.Contains(err.Error(), c.bad) {
					t.Fatalf("error %v does not name %s", err, c.bad)
				}
				return
			}
			if err != nil || cfg.ServiceAppKey != c.key || cfg.ServiceAppSecret != c.secret {
				t.Fatalf("pair %q/%q, %v; want %q/%q", cfg.ServiceAppKey, cfg.ServiceAppSecret, err, c.key, c.secret)
			}
		})
	}
}
