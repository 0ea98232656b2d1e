package service_test

import (
	"maps"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/liveproctor/workspaces/pkg/envconfig"
	"github.com/liveproctor/workspaces/pkg/webhook"
	ltidomain "github.com/liveproctor/workspaces/services/workspace/internal/lti/domain"
	"github.com/liveproctor/workspaces/services/workspace/internal/service"
)

func TestConfigNamesEveryBadVariable(t *testing.T) {
	_, err := service.ConfigFromEnv(envconfig.FromMap(map[string]string{
		"KEY_ENCRYPTION_KEY":        "c2hvcnQ=", // 5 bytes
		"WORKSPACE_CALL_TIMEOUT":    "-1s",
		"METRICS_ADDR":              "everywhere",
		"PPROF_ADDR":                "everywhere",
		"LTI_ALLOW_INSECURE_HOSTS":  "127.0.0.1:8443,127.0.0.1",
		"LTI_JWKS_REFETCH_INTERVAL": "1m",
	}))
	if err == nil {
		t.Fatal("a bad configuration was accepted")
	}
	for _, name := range []string{"MONGODB_URI", "KEY_ENCRYPTION_KEY", "KEY_HMAC_KEY", "WORKSPACE_CALL_TIMEOUT", "METRICS_ADDR", "PPROF_ADDR", "LTI_ALLOW_INSECURE_HOSTS", "LTI_JWKS_REFETCH_INTERVAL"} {
		if !strings.Contains(err.Error(), name) {
			t.Errorf("the error does not name %s: %v", name, err)
		}
	}
	if strings.Contains(err.Error(), "c2hvcnQ=") {
		t.Error("the error echoes a key")
	}
}

// Calling the auth service needs a key pair: SERVICE_APP_KEY/SECRET, or
// else the bootstrap pair.
func TestConfigServiceKeyPair(t *testing.T) {
	env := map[string]string{
		"MONGODB_URI":        "mongodb://127.0.0.1:27017",
		"KEY_ENCRYPTION_KEY": "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=",
		"KEY_HMAC_KEY":       "BBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBB=",
		"AUTH_SERVICE_ADDR":  "127.0.0.1:9091",
	}
	if _, err := service.ConfigFromEnv(envconfig.FromMap(env)); err == nil || !strings.Contains(err.Error(), "SERVICE_APP_KEY") {
		t.Fatalf("AUTH_SERVICE_ADDR without a key pair: %v", err)
	}
	env["BOOTSTRAP_APP_KEY"], env["BOOTSTRAP_APP_SECRET"] = "boot-k", "boot-s"
	cfg, err := service.ConfigFromEnv(envconfig.FromMap(env))
	if err != nil || cfg.ServiceAppKey != "boot-k" || cfg.ServiceAppSecret != "boot-s" || cfg.Bootstrap.AppKey != "boot-k" {
		t.Fatalf("the bootstrap pair by default: %+v, %v", cfg, err)
	}
	env["SERVICE_APP_KEY"], env["SERVICE_APP_SECRET"] = "svc-k", "svc-s"
	cfg, err = service.ConfigFromEnv(envconfig.FromMap(env))
	if err != nil || cfg.ServiceAppKey != "svc-k" || cfg.ServiceAppSecret != "svc-s" || cfg.Bootstrap.AppKey != "boot-k" {
		t.Fatalf("its own pair: %+v, %v", cfg, err)
	}
	delete(env, "BOOTSTRAP_APP_SECRET")
	if _, err := service.ConfigFromEnv(envconfig.FromMap(env)); err == nil || !strings.Contains(err.Error(), "BOOTSTRAP_APP_SECRET") {
		t.Fatalf("half the bootstrap pair: %v", err)
	}
}

// The tool keys' schedule: the defaults, a test's schedule of seconds,
// and the combinations ToolKeyRotation.Check refuses, named.
func TestConfigToolKeySchedule(t *testing.T) {
	base := map[string]string{
		"MONGODB_URI":        "mongodb://127.0.0.1:27017",
		"KEY_ENCRYPTION_KEY": "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=",
		"KEY_HMAC_KEY":       "BBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBB=",
	}
	for _, tc := range []struct {
		name      string
		env       map[string]string
		want      ltidomain.ToolKeyRotation
		wantCheck time.Duration
		bad       string // the variable the error names; empty: accepted
	}{
		{name: "defaults", want: ltidomain.DefaultToolKeyRotation, wantCheck: time.Hour},
		{
			name: "a test's seconds",
			env:  map[string]string{"LTI_TOOL_KEY_ROTATION": "6s", "LTI_TOOL_KEY_LEAD": "3s", "LTI_TOOL_KEY_OVERLAP": "6s", "LTI_TOOL_KEY_CHECK_INTERVAL": "500ms"},
			want: ltidomain.ToolKeyRotation{Every: 6 * time.Second, Lead: 3 * time.Second, Overlap: 6 * time.Second}, wantCheck: 500 * time.Millisecond,
		},
		{name: "rotation no longer than the lead", env: map[string]string{"LTI_TOOL_KEY_ROTATION": "48h"}, bad: "LTI_TOOL_KEY_ROTATION"},
		{name: "lead past the default rotation", env: map[string]string{"LTI_TOOL_KEY_LEAD": "2200h"}, bad: "LTI_TOOL_KEY_ROTATION"},
		{name: "no overlap", env: map[string]string{"LTI_TOOL_KEY_OVERLAP": "0s"}, bad: "LTI_TOOL_KEY_OVERLAP"},
		{name: "under a second", env: map[string]string{"LTI_TOOL_KEY_LEAD": "500ms"}, bad: "LTI_TOOL_KEY_LEAD"},
		{name: "not a duration", env: map[string]string{"LTI_TOOL_KEY_ROTATION": "90d"}, bad: "LTI_TOOL_KEY_ROTATION"},
		{name: "checked too often", env: map[string]string{"LTI_TOOL_KEY_CHECK_INTERVAL": "10ms"}, bad: "LTI_TOOL_KEY_CHECK_INTERVAL"},
		{name: "checked less often than the lead", env: map[string]string{"LTI_TOOL_KEY_CHECK_INTERVAL": "49h"}, bad: "LTI_TOOL_KEY_CHECK_INTERVAL"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			env := maps.Clone(base)
			maps.Copy(env, tc.env)
			cfg, err := service.ConfigFromEnv(envconfig.FromMap(env))
			if tc.bad != "" {
				if err == nil || !strings.Contains(err.Error(), tc.bad) {
					t.Fatalf("want an error naming %s, got %v", tc.bad, err)
				}
				return
			}
			if err != nil || cfg.LTIToolKeys != tc.want || cfg.LTIToolKeyCheck != tc.wantCheck {
				t.Fatalf("got %+v every %s, %v; want %+v every %s", cfg.LTIToolKeys, cfg.LTIToolKeyCheck, err, tc.want, tc.wantCheck)
			}
		})
	}
}

// The cap on pending LTI 1.3 logins: 50,000 by default, from 1.
func TestConfigPendingLoginsMax(t *testing.T) {
	base := map[string]string{
		"MONGODB_URI":        "mongodb://127.0.0.1:27017",
		"KEY_ENCRYPTION_KEY": "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=",
		"KEY_HMAC_KEY":       "BBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBB=",
	}
	for _, tc := range []struct {
		value string
		want  int // 0: refused
	}{{"", 50_000}, {"20", 20}, {"1", 1}, {"10000000", 10_000_000}, {"0", 0}, {"-5", 0}, {"10000001", 0}, {"many", 0}} {
		env := maps.Clone(base)
		if tc.value != "" {
			env["LTI13_PENDING_LOGINS_MAX"] = tc.value
		}
		cfg, err := service.ConfigFromEnv(envconfig.FromMap(env))
		switch {
		case tc.want == 0 && (err == nil || !strings.Contains(err.Error(), "LTI13_PENDING_LOGINS_MAX")):
			t.Errorf("LTI13_PENDING_LOGINS_MAX=%q: %v, want an error naming it", tc.value, err)
		case tc.want != 0 && (err != nil || cfg.LTI13PendingLoginsMax != tc.want):
			t.Errorf("LTI13_PENDING_LOGINS_MAX=%q: %d, %v; want %d", tc.value, cfg.LTI13PendingLoginsMax, err, tc.want)
		}
	}
}

// The webhooks' settings: the defaults, and each bad value named.
func TestConfigWebhooks(t *testing.T) {
	base := map[string]string{
		"MONGODB_URI":        "mongodb://127.0.0.1:27017",
		"KEY_ENCRYPTION_KEY": "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=",
		"KEY_HMAC_KEY":       "BBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBB=",
	}
	cfg, err := service.ConfigFromEnv(envconfig.FromMap(base))
	want := service.WebhookSettings{Workers: 8, Lease: 30 * time.Second, IdleRecheck: time.Minute, AttemptRetention: 720 * time.Hour,
		RetrySchedule: webhook.DefaultSchedule}
	if err != nil || !reflect.DeepEqual(cfg.Webhooks, want) || len(cfg.WebhookURLs.InsecureHosts) != 0 {
		t.Fatalf("defaults: %+v, %+v, %v; want %+v and no insecure host", cfg.Webhooks, cfg.WebhookURLs, err, want)
	}
	env := maps.Clone(base)
	env["WEBHOOK_ALLOW_INSECURE_HOSTS"] = "127.0.0.1:8443"
	if cfg, err = service.ConfigFromEnv(envconfig.FromMap(env)); err != nil || !slices.Equal(cfg.WebhookURLs.InsecureHosts, []string{"127.0.0.1:8443"}) {
		t.Fatalf("an insecure host: %+v, %v", cfg.WebhookURLs, err)
	}
	env = maps.Clone(base)
	env["WEBHOOK_RETRY_SCHEDULE"] = "1s, 2s,1m"
	if cfg, err = service.ConfigFromEnv(envconfig.FromMap(env)); err != nil ||
		!slices.Equal(cfg.Webhooks.RetrySchedule, webhook.Schedule{time.Second, 2 * time.Second, time.Minute}) {
		t.Fatalf("a retry schedule: %v, %v", cfg.Webhooks.RetrySchedule, err)
	}
	for name, value := range map[string]string{
		"WEBHOOK_ALLOW_INSECURE_HOSTS": "127.0.0.1",
		"WEBHOOK_WORKERS":              "0",
		"WEBHOOK_LEASE":                "1s",
		"WEBHOOK_IDLE_RECHECK":         "2h",
		"WEBHOOK_ATTEMPT_RETENTION":    "30m",
		"WEBHOOK_RETRY_SCHEDULE":       "5s,soon",
	} {
		env := maps.Clone(base)
		env[name] = value
		if _, err := service.ConfigFromEnv(envconfig.FromMap(env)); err == nil || !strings.Contains(err.Error(), name) {
			t.Errorf("%s=%s: %v, want an error naming it", name, value, err)
		}
	}
}

// LTI_LAUNCH_GRACE: 30 days by default, any positive duration.
func TestConfigLaunchGrace(t *testing.T) {
	base := map[string]string{
		"MONGODB_URI":        "mongodb://127.0.0.1:27017",
		"KEY_ENCRYPTION_KEY": "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=",
		"KEY_HMAC_KEY":       "BBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBB=",
	}
	for _, tc := range []struct {
		value string
		want  time.Duration
		ok    bool
	}{{"", 720 * time.Hour, true}, {"1s", time.Second, true}, {"0s", 0, false}, {"2160h", 2160 * time.Hour, true}, {"-1h", 0, false}, {"30d", 0, false}} {
		env := maps.Clone(base)
		if tc.value != "" {
			env["LTI_LAUNCH_GRACE"] = tc.value
		}
		cfg, err := service.ConfigFromEnv(envconfig.FromMap(env))
		switch {
		case !tc.ok && (err == nil || !strings.Contains(err.Error(), "LTI_LAUNCH_GRACE")):
			t.Errorf("LTI_LAUNCH_GRACE=%q: %v, want an error naming it", tc.value, err)
		case tc.ok && (err != nil || cfg.LTILaunchGrace != tc.want):
			t.Errorf("LTI_LAUNCH_GRACE=%q: %s, %v; want %s", tc.value, cfg.LTILaunchGrace, err, tc.want)
		}
	}
}

// The delivery of LTI scores: 4 workers, a one-minute lease, a poll every
// second, given up after 7 days, kept 30, on the webhooks' default
// schedule unless told otherwise; each held to its bounds, the give-up
// window past the lease and the retention past the window.
func TestConfigScoreDelivery(t *testing.T) {
	base := map[string]string{
		"MONGODB_URI":        "mongodb://127.0.0.1:27017",
		"KEY_ENCRYPTION_KEY": "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=",
		"KEY_HMAC_KEY":       "BBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBB=",
	}
	cfg, err := service.ConfigFromEnv(envconfig.FromMap(base))
	want := service.LTIScoreSettings{Workers: 4, Lease: time.Minute, Poll: time.Second, GiveUpAfter: 168 * time.Hour,
		Retention: 720 * time.Hour, RetrySchedule: webhook.DefaultSchedule}
	if err != nil || !reflect.DeepEqual(cfg.LTIScores, want) {
		t.Fatalf("defaults: %+v, %v; want %+v", cfg.LTIScores, err, want)
	}
	env := maps.Clone(base)
	maps.Copy(env, map[string]string{
		"LTI_SCORE_WORKERS": "64", "LTI_SCORE_LEASE": "5s", "LTI_SCORE_POLL": "100ms", "LTI_SCORE_GIVE_UP_AFTER": "6s",
		"LTI_SCORE_RETENTION": "12h0m6s", "LTI_SCORE_RETRY_SCHEDULE": "1s,1s",
	})
	want = service.LTIScoreSettings{Workers: 64, Lease: 5 * time.Second, Poll: 100 * time.Millisecond, GiveUpAfter: 6 * time.Second,
		Retention: 12*time.Hour + 6*time.Second, RetrySchedule: webhook.Schedule{time.Second, time.Second}}
	if cfg, err = service.ConfigFromEnv(envconfig.FromMap(env)); err != nil || !reflect.DeepEqual(cfg.LTIScores, want) {
		t.Fatalf("set: %+v, %v; want %+v", cfg.LTIScores, err, want)
	}
	for _, tc := range []struct {
		env  map[string]string
		name string // the variable the error names
	}{
		{map[string]string{"LTI_SCORE_WORKERS": "0"}, "LTI_SCORE_WORKERS"},
		{map[string]string{"LTI_SCORE_WORKERS": "65"}, "LTI_SCORE_WORKERS"},
		{map[string]string{"LTI_SCORE_WORKERS": "four"}, "LTI_SCORE_WORKERS"},
		{map[string]string{"LTI_SCORE_LEASE": "1s"}, "LTI_SCORE_LEASE"},
		{map[string]string{"LTI_SCORE_POLL": "50ms"}, "LTI_SCORE_POLL"},
		{map[string]string{"LTI_SCORE_POLL": "2m"}, "LTI_SCORE_POLL"},
		{map[string]string{"LTI_SCORE_GIVE_UP_AFTER": "7d"}, "LTI_SCORE_GIVE_UP_AFTER"},
		{map[string]string{"LTI_SCORE_GIVE_UP_AFTER": "1m"}, "LTI_SCORE_GIVE_UP_AFTER"},
		{map[string]string{"LTI_SCORE_LEASE": "5m", "LTI_SCORE_GIVE_UP_AFTER": "4m"}, "LTI_SCORE_GIVE_UP_AFTER"},
		{map[string]string{"LTI_SCORE_RETENTION": "0s"}, "LTI_SCORE_RETENTION"},
		{map[string]string{"LTI_SCORE_RETENTION": "168h"}, "LTI_SCORE_RETENTION"},
		{map[string]string{"LTI_SCORE_RETENTION": "179h"}, "LTI_SCORE_RETENTION"},
		{map[string]string{"LTI_SCORE_GIVE_UP_AFTER": "720h"}, "LTI_SCORE_RETENTION"},
		{map[string]string{"LTI_SCORE_RETRY_SCHEDULE": "0s"}, "LTI_SCORE_RETRY_SCHEDULE"},
	} {
		env := maps.Clone(base)
		maps.Copy(env, tc.env)
		if _, err := service.ConfigFromEnv(envconfig.FromMap(env)); err == nil || !strings.Contains(err.Error(), tc.name) {
			t.Errorf("%v: %v, want an error naming %s", tc.env, err, tc.name)
		}
	}
	env = maps.Clone(base)
	env["LTI_SCORE_RETENTION"] = "180h" // the window's 168 hours and 12
	if _, err := service.ConfigFromEnv(envconfig.FromMap(env)); err != nil {
		t.Fatalf("the shortest retention the default window allows: %v", err)
	}
}
