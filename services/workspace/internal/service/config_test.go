package service_test

import (
	"strings"
	"testing"

	"github.com/liveproctor/workspaces/pkg/envconfig"
	"github.com/liveproctor/workspaces/services/workspace/internal/service"
)

func TestConfigNamesEveryBadVariable(t *testing.T) {
	_, err := service.ConfigFromEnv(envconfig.FromMap(map[string]string{
		"KEY_ENCRYPTION_KEY":     "c2hvcnQ=", // 5 bytes
		"WORKSPACE_CALL_TIMEOUT": "-1s",
		"METRICS_ADDR":           "everywhere",
		"PPROF_ADDR":             "everywhere",
	}))
	if err == nil {
		t.Fatal("a bad configuration was accepted")
	}
	for _, name := range []string{"MONGODB_URI", "KEY_ENCRYPTION_KEY", "KEY_HMAC_KEY", "WORKSPACE_CALL_TIMEOUT", "METRICS_ADDR", "PPROF_ADDR"} {
		if !strings.Contains(err.Error(), name) {
			t.Errorf("the error does not name %s: %v", name, err)
		}
	}
	if strings.Contains(err.Error(), "c2hvcnQ=") {
		t.Error("the error echoes a key")
	}
}
