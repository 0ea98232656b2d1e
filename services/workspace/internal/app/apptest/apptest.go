// Package apptest helps the tests of the workspace application and of the
// LTI use cases built on it: making a workspace as a caller would, and
// checking an error's kind.
package apptest

import (
	"context"
	"testing"
	"time"

	"github.com/liveproctor/workspaces/pkg/fault"
	"github.com/liveproctor/workspaces/pkg/testenv"
	"github.com/liveproctor/workspaces/services/workspace/internal/app"
	"github.com/liveproctor/workspaces/services/workspace/internal/domain"
)

// CreateWorkspace makes a workspace as caller (a district named after its
// id unless in says otherwise) and returns the answer and a caller for its
// server key pair.
func CreateWorkspace(t testing.TB, a *app.App, caller domain.Caller, in app.CreateInput) (app.CreateResult, domain.Caller) {
	t.Helper()
	if in.Type == "" {
		in.Type = "DISTRICT"
	}
	if in.Name == "" {
		in.Name = "Workspace " + in.ID
	}
	// A create answered Unavailable is stored, and its retry answers the
	// original result once the events are published (docs/events.md): a
	// caller retries it, as a busy test store may ask.
	var res app.CreateResult
	testenv.Eventually(t, 30*time.Second, func() error {
		var err error
		res, err = a.CreateWorkspace(context.Background(), caller, in)
		if err != nil && fault.KindOf(err) != fault.Unavailable {
			t.Fatalf("create %s: %v", in.ID, err)
		}
		return err
	}, "create %s", in.ID)
	c, err := a.Authenticate(context.Background(), res.Server.ConsumerKey, res.Server.SharedSecret)
	if err != nil {
		t.Fatalf("authenticate as %s: %v", in.ID, err)
	}
	return res, c
}

// WantKind fails the test unless err is an error of kind.
func WantKind(t testing.TB, err error, kind fault.Kind) {
	t.Helper()
	if got := fault.KindOf(err); err == nil || got != kind {
		t.Fatalf("error = %v (kind %v), want kind %v", err, got, kind)
	}
}
