package mongostore_test

import (
	"context"
	"slices"
	"testing"

	"github.com/liveproctor/workspaces/services/workspace/internal/adapters/mongoconn/indexcheck"
	"github.com/liveproctor/workspaces/services/workspace/internal/app"
	"github.com/liveproctor/workspaces/services/workspace/internal/domain"
	"github.com/liveproctor/workspaces/services/workspace/internal/lti/adapters/launchhealth"
	ltiapp "github.com/liveproctor/workspaces/services/workspace/internal/lti/app"
	ltidomain "github.com/liveproctor/workspaces/services/workspace/internal/lti/domain"
)

// The round trips each use case makes to the store, counted by the command
// monitor (indexcheck.Log) as the commands one call sends, in order. The
// README's Architecture section has the same table. The publish of a
// change's events is the same three commands after every change: read the
// outbox, insert its events, empty it.
var publish = []indexcheck.Command{"find workspaces", "insert events", "update workspaces"}

func TestRoundTripsPerOperation(t *testing.T) {
	f := newEventsFixture(t, nil)
	ctx := context.Background()
	root := f.root
	regs := ltiapp.NewRegistrations(app.NewLTIPort(f.app), launchhealth.New(env.Client().Database(f.db)), ltiapp.Settings{})
	measure := func(what string, want []indexcheck.Command, call func() error) {
		t.Helper()
		mark := commands.Mark(f.db)
		if err := call(); err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		if got := commands.Since(f.db, mark); !slices.Equal(got, want) {
			t.Errorf("%s sent %d commands %s, want %d %s", what, len(got), indexcheck.Sequence(got), len(want), indexcheck.Sequence(want))
		}
	}
	with := func(cmds []indexcheck.Command, more ...[]indexcheck.Command) []indexcheck.Command {
		return slices.Concat(append([][]indexcheck.Command{cmds}, more...)...)
	}

	// Create: one read of the caller, the parent and the id (a retry's
	// original), the reservations of app keys and codes, the insert.
	for _, id := range []string{"a", "b", "c"} {
		in := app.CreateInput{ID: id, Name: "Workspace " + id, Type: "DISTRICT"}
		if id != "a" {
			in.ParentID = "a"
		}
		measure("create "+id, with([]indexcheck.Command{"find workspaces", "insert app_keys", "insert registration_codes", "insert workspaces"}, publish),
			func() error { _, err := f.app.CreateWorkspace(ctx, root, in); return err })
	}
	// A retry answers from the one read; its publish finds nothing left.
	measure("a create's retry", []indexcheck.Command{"find workspaces", "find workspaces"}, func() error {
		_, err := f.app.CreateWorkspace(ctx, root, app.CreateInput{ID: "a", Name: "Workspace a", Type: "DISTRICT"})
		return err
	})

	measure("get", []indexcheck.Command{"find workspaces"}, func() error {
		_, err := f.app.GetWorkspace(ctx, root, "b")
		return err
	})
	// A login's access check (the auth service's GetWorkspaceStatus), with
	// the caller's credential remembered, as it is after its first call.
	measure("a login's access check", []indexcheck.Command{"find workspaces"}, func() error {
		_, err := f.app.GetWorkspaceStatus(ctx, root, "b")
		return err
	})
	// A key pair's first use on a replica finds its workspace in one read.
	measure("a find by app key", []indexcheck.Command{"find workspaces"}, func() error {
		_, err := f.repo.GetByAppKey(ctx, root.AppKey)
		return err
	})
	for _, size := range []int32{1, 2, 1000} {
		measure("a list page", []indexcheck.Command{"find workspaces"}, func() error {
			res, err := f.app.ListWorkspaces(ctx, root, app.ListInput{PageSize: &size, Search: "workspace"})
			if err == nil && len(res.Workspaces) != min(int(size), 3) {
				t.Errorf("page of %d holds %d workspaces", size, len(res.Workspaces))
			}
			return err
		})
	}

	// Update, delete, undelete: read, then the conditional write.
	name := "Renamed"
	measure("update", with([]indexcheck.Command{"find workspaces", "update workspaces"}, publish), func() error {
		_, err := f.app.UpdateWorkspace(ctx, root, app.UpdateInput{ID: "b", Changes: domain.Changes{Name: &name}})
		return err
	})
	measure("delete", with([]indexcheck.Command{"find workspaces", "update workspaces"}, publish), func() error {
		_, err := f.app.DeleteWorkspace(ctx, root, "c", app.Precondition{})
		return err
	})

	// Key pairs: read, reserve the new app key, the conditional write.
	var appKey string
	measure("create a key pair", with([]indexcheck.Command{"find workspaces", "insert app_keys", "update workspaces"}, publish), func() error {
		res, err := f.app.CreateWorkspaceKey(ctx, root, "b", domain.NewKey{Name: "ci"})
		appKey = res.Key.AppKey
		return err
	})
	measure("rotate a key pair", with([]indexcheck.Command{"find workspaces", "insert app_keys", "update workspaces"}, publish), func() error {
		_, err := f.app.RotateWorkspaceKey(ctx, root, "b", appKey, nil)
		return err
	})
	// Revoking retires the app key first, so it reads the workspace to
	// know the revocation is allowed, then again for the write.
	measure("revoke a key pair", with([]indexcheck.Command{"find workspaces", "update app_keys", "find workspaces", "update workspaces"}, publish), func() error {
		_, err := f.app.RevokeWorkspaceKey(ctx, root, "b", appKey)
		return err
	})

	// LTI 1.3 registrations: the pair is reserved like an app key, then
	// listed by the conditional write; a delete releases it after its
	// write. Deployments change the workspace only. Every answer but a
	// create's renders the registrations' launch health, read in one query
	// (before the write of a change, and its record removed after a
	// delete's).
	var reg ltiapp.RegistrationView
	measure("create an LTI registration", with([]indexcheck.Command{"find workspaces", "insert lti_registrations", "update workspaces"}, publish), func() error {
		var err error
		reg, err = regs.Create(ctx, root, "b", ltidomain.NewRegistration{
			Issuer: "https://canvas.instructure.com", ClientID: "100",
			AuthLoginURL: "https://sso.canvaslms.com/api/lti/authorize_redirect", JWKSURL: "https://sso.canvaslms.com/api/lti/security/jwks",
		})
		return err
	})
	measure("get an LTI registration", []indexcheck.Command{"find workspaces", "find lti_launch_health"}, func() error {
		_, err := regs.Get(ctx, root, "b", reg.ID)
		return err
	})
	measure("list LTI registrations", []indexcheck.Command{"find workspaces", "find lti_launch_health"}, func() error {
		_, err := regs.List(ctx, root, "b")
		return err
	})
	measure("add a deployment id", with([]indexcheck.Command{"find lti_launch_health", "find workspaces", "update workspaces"}, publish), func() error {
		_, err := regs.AddDeployment(ctx, root, "b", reg.ID, "1:a")
		return err
	})
	measure("find a registration by its pair", []indexcheck.Command{"find lti_registrations", "find workspaces"}, func() error {
		_, err := domain.WorkspaceOfLTIRegistration(ctx, f.repo, reg.Issuer, reg.ClientID)
		return err
	})
	measure("find the registrations that can own a login without client_id", []indexcheck.Command{"find workspaces"}, func() error {
		_, err := f.repo.WorkspacesWithLTIIssuer(ctx, reg.Issuer, "1:a", 2)
		return err
	})
	measure("delete an LTI registration", with([]indexcheck.Command{"find lti_launch_health", "find workspaces", "update workspaces"}, publish,
		[]indexcheck.Command{"delete lti_registrations", "delete lti_launch_health"}), func() error {
		_, err := regs.Delete(ctx, root, "b", reg.ID)
		return err
	})
}
