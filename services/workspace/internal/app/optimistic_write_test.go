package app_test

import (
	"context"
	"testing"

	"github.com/liveproctor/workspaces/pkg/fault"
	"github.com/liveproctor/workspaces/services/workspace/internal/adapters/memstore"
	"github.com/liveproctor/workspaces/services/workspace/internal/app"
	"github.com/liveproctor/workspaces/services/workspace/internal/app/apptest"
	"github.com/liveproctor/workspaces/services/workspace/internal/domain"
)

// racingRepo loses every race once lose is set: each Update finds the
// stored revision changed, as when other requests keep writing the
// workspace between read and write.
type racingRepo struct {
	domain.Repository
	lose    bool
	updates int
}

func (r *racingRepo) Update(ctx context.Context, w *domain.Workspace) (*domain.Workspace, error) {
	if r.lose {
		r.updates++
		return nil, domain.ErrRevisionChanged
	}
	return r.Repository.Update(ctx, w)
}

// A change without a precondition retries a lost race and, when every
// attempt loses, answers Aborted (409): the caller set no precondition, so
// 412 would blame it for one. With a precondition the revision it named is
// gone, which is PreconditionFailed (412) at once.
func TestLostRacesAreAbortedUnlessAPreconditionWasSet(t *testing.T) {
	name := "Renamed"
	tests := []struct {
		name         string
		deleted      bool // start from a deleted workspace
		precondition bool
		change       func(a *app.App, caller domain.Caller, cond app.Precondition) error
		wantKind     fault.Kind
		wantRetried  bool
	}{
		{"update", false, false, func(a *app.App, c domain.Caller, cond app.Precondition) error {
			_, err := a.UpdateWorkspace(context.Background(), c, app.UpdateInput{ID: "w", Changes: domain.Changes{Name: &name}, Precondition: cond})
			return err
		}, fault.Aborted, true},
		{"update with a precondition", false, true, func(a *app.App, c domain.Caller, cond app.Precondition) error {
			_, err := a.UpdateWorkspace(context.Background(), c, app.UpdateInput{ID: "w", Changes: domain.Changes{Name: &name}, Precondition: cond})
			return err
		}, fault.PreconditionFailed, false},
		{"delete", false, false, func(a *app.App, c domain.Caller, cond app.Precondition) error {
			_, err := a.DeleteWorkspace(context.Background(), c, "w", cond)
			return err
		}, fault.Aborted, true},
		{"delete with a precondition", false, true, func(a *app.App, c domain.Caller, cond app.Precondition) error {
			_, err := a.DeleteWorkspace(context.Background(), c, "w", cond)
			return err
		}, fault.PreconditionFailed, false},
		{"undelete", true, false, func(a *app.App, c domain.Caller, _ app.Precondition) error {
			_, err := a.UndeleteWorkspace(context.Background(), c, "w")
			return err
		}, fault.Aborted, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			repo := &racingRepo{Repository: memstore.New()}
			f := newFixtureOn(t, repo)
			ctx := context.Background()
			f.create(f.root, app.CreateInput{ID: "w"})
			w, err := f.app.GetWorkspace(ctx, f.root, "w")
			if err != nil {
				t.Fatal(err)
			}
			var cond app.Precondition
			if tt.precondition {
				cond = app.IfRevision(w.Revision())
			}
			if tt.deleted {
				if _, err := f.app.DeleteWorkspace(ctx, f.root, "w", app.Precondition{}); err != nil {
					t.Fatal(err)
				}
			}
			repo.lose = true
			apptest.WantKind(t, tt.change(f.app, f.root, cond), tt.wantKind)
			if retried := repo.updates > 1; retried != tt.wantRetried {
				t.Errorf("%d attempts to write", repo.updates)
			}
		})
	}
}
