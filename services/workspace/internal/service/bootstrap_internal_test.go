package service

import (
	"context"
	"testing"

	"github.com/liveproctor/workspaces/pkg/fault"
	"github.com/liveproctor/workspaces/services/workspace/internal/adapters/memstore"
	"github.com/liveproctor/workspaces/services/workspace/internal/app"
)

// A bad bootstrap configuration is reported by the variables to fix.
func TestBootstrapErrorsNameVariables(t *testing.T) {
	a := app.New(memstore.New(), nil, app.Settings{})
	tests := []struct {
		cfg     app.BootstrapConfig
		message string
		fields  []string
	}{
		{app.BootstrapConfig{WorkspaceID: "a:b", Name: " ", Products: []string{"pub/math", "nobank"}},
			"BOOTSTRAP_WORKSPACE_ID: " + "must be 1 to 128 characters of A-Z, a-z, 0-9, '.', '_' or '-' (and 2 more)",
			[]string{"BOOTSTRAP_WORKSPACE_ID", "BOOTSTRAP_WORKSPACE_NAME", "BOOTSTRAP_PRODUCTS[1]"}},
		{app.BootstrapConfig{WorkspaceID: "root", Name: "Root", AppKey: "k"},
			"BOOTSTRAP_APP_SECRET: is required with an app key", []string{"BOOTSTRAP_APP_SECRET"}},
	}
	for _, tt := range tests {
		_, err := a.Bootstrap(context.Background(), tt.cfg)
		e, ok := fault.As(bootstrapError(err))
		if !ok || e.Message != tt.message || len(e.Fields) != len(tt.fields) {
			t.Fatalf("error = %v, want %q", err, tt.message)
		}
		for i, f := range e.Fields {
			if f.Field != tt.fields[i] {
				t.Errorf("field %d = %s, want %s", i, f.Field, tt.fields[i])
			}
		}
	}
}
