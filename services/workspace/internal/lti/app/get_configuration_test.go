package app_test

import (
	"context"
	"strings"
	"testing"

	"github.com/liveproctor/workspaces/pkg/fault"
	"github.com/liveproctor/workspaces/services/workspace/internal/app"
	"github.com/liveproctor/workspaces/services/workspace/internal/app/apptest"
	ltiapp "github.com/liveproctor/workspaces/services/workspace/internal/lti/app"
)

func TestLTIConfigurationMatchesTheCreateResult(t *testing.T) {
	f := newFixture(t, deps{})
	ctx := context.Background()
	res, _ := f.create(f.root, app.CreateInput{ID: "district-1", Name: `Springfield <"K&12">`})

	got, err := f.regs.Configuration(ctx, "district-1")
	if err != nil {
		t.Fatal(err)
	}
	want := ltiapp.Configuration{
		WorkspaceID: "district-1",
		Title:       `LiveProctor (Springfield <"K&12">)`,
		LaunchURL:   res.LTI.LaunchURL,
		Domain:      "lti.test",
	}
	if got.WorkspaceID != want.WorkspaceID || got.Title != want.Title || got.LaunchURL != want.LaunchURL || got.Domain != want.Domain {
		t.Errorf("configuration = %+v, want %+v", got, want)
	}
	if got.LaunchURL != "https://lti.test/lti/v1/launch" {
		t.Errorf("launch URL = %q", got.LaunchURL)
	}
	if got.LTI13LoginURL != "https://lti.test/lti/v1p3/login" || got.LTI13LaunchURL != "https://lti.test/lti/v1p3/launch" ||
		got.LTI13JWKSURL != "https://lti.test/lti/v1p3/jwks.json" {
		t.Errorf("LTI 1.3 URLs = %q %q %q", got.LTI13LoginURL, got.LTI13LaunchURL, got.LTI13JWKSURL)
	}
	if !strings.Contains(got.Description, `Springfield <"K&12">`) || !strings.Contains(got.Description, "custom_exam_config_id") {
		t.Errorf("description = %q, want the workspace's name and the custom parameter", got.Description)
	}
}

func TestLTIConfigurationOfMissingWorkspacesIsNotFound(t *testing.T) {
	f := newFixture(t, deps{})
	ctx := context.Background()
	_, _ = f.create(f.root, app.CreateInput{ID: "gone"})
	if _, err := f.app.DeleteWorkspace(ctx, f.root, "gone", app.Precondition{}); err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"unknown", "gone", "", "no/slash", strings.Repeat("a", 129)} {
		_, err := f.regs.Configuration(ctx, id)
		apptest.WantKind(t, err, fault.NotFound)
		if id != "" && !strings.Contains(err.Error(), "not found") {
			t.Errorf("%q: message %q", id, err)
		}
	}
	// Undeleted, it is served again.
	if _, err := f.app.UndeleteWorkspace(ctx, f.root, "gone"); err != nil {
		t.Fatal(err)
	}
	if _, err := f.regs.Configuration(ctx, "gone"); err != nil {
		t.Errorf("after undelete: %v", err)
	}
}
