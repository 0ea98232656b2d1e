package app_test

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/liveproctor/workspaces/pkg/fault"
	"github.com/liveproctor/workspaces/pkg/outbound"
	"github.com/liveproctor/workspaces/services/workspace/internal/adapters/memstore"
	"github.com/liveproctor/workspaces/services/workspace/internal/app"
	"github.com/liveproctor/workspaces/services/workspace/internal/app/apptest"
	"github.com/liveproctor/workspaces/services/workspace/internal/domain"
	ltidomain "github.com/liveproctor/workspaces/services/workspace/internal/lti/domain"
)

func canvas(clientID string, deployments ...string) ltidomain.NewRegistration {
	return ltidomain.NewRegistration{
		Issuer: "https://canvas.instructure.com", ClientID: clientID, DeploymentIDs: deployments,
		AuthLoginURL: "https://sso.canvaslms.com/api/lti/authorize_redirect", JWKSURL: "https://sso.canvaslms.com/api/lti/security/jwks",
	}
}

// A workspace registers a platform, as its managers may; the pair is then
// taken for every workspace; the registration is found by its pair (what a
// launch will do), and once deleted the pair is free again.
func TestLTIRegistrationsFollowTheKeyPairRule(t *testing.T) {
	repo := memstore.New()
	f := newFixture(t, deps{repo: repo})
	ctx := context.Background()
	_, self := f.create(f.root, app.CreateInput{ID: "w"})
	_, other := f.create(f.root, app.CreateInput{ID: "other"})

	reg, err := f.regs.Create(ctx, self, "w", canvas("100", "1:a"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.regs.Create(ctx, f.root, "w", canvas("200")); err != nil {
		t.Fatalf("a manager: %v", err)
	}
	_, err = f.regs.Create(ctx, other, "w", canvas("300"))
	apptest.WantKind(t, err, fault.NotFound)
	_, err = f.regs.Get(ctx, other, "w", reg.ID)
	apptest.WantKind(t, err, fault.NotFound)
	// Its own workspace id does not reach another's registration.
	_, err = f.regs.Get(ctx, other, "other", reg.ID)
	apptest.WantKind(t, err, fault.NotFound)
	_, err = f.regs.Delete(ctx, other, "other", reg.ID)
	apptest.WantKind(t, err, fault.NotFound)

	// The pair is taken, in this workspace and in any other.
	_, err = f.regs.Create(ctx, self, "w", canvas("100"))
	apptest.WantKind(t, err, fault.Conflict)
	_, err = f.regs.Create(ctx, other, "other", canvas("100"))
	apptest.WantKind(t, err, fault.Conflict)

	if found, err := domain.WorkspaceOfLTIRegistration(ctx, repo, "https://canvas.instructure.com", "100"); err != nil || found.ID() != "w" {
		t.Fatalf("found by its pair: %v, %v", found, err)
	}
	regs, err := f.regs.List(ctx, self, "w")
	if err != nil || len(regs) != 2 || regs[0].ID != reg.ID {
		t.Fatalf("list: %+v, %v", regs, err)
	}

	if got, err := f.regs.Delete(ctx, self, "w", reg.ID); err != nil || got.ID != reg.ID {
		t.Fatalf("delete: %+v, %v", got, err)
	}
	_, err = f.regs.Get(ctx, self, "w", reg.ID)
	apptest.WantKind(t, err, fault.NotFound)
	if _, err := repo.LTIReservation(ctx, "https://canvas.instructure.com", "100"); !errors.Is(err, domain.ErrNotFound) {
		t.Fatalf("the pair's reservation after the delete: %v", err)
	}
	if _, err := f.regs.Create(ctx, other, "other", canvas("100")); err != nil {
		t.Fatalf("the freed pair in another workspace: %v", err)
	}
}

func TestLTIDeployments(t *testing.T) {
	f := newFixture(t, deps{})
	ctx := context.Background()
	_, self := f.create(f.root, app.CreateInput{ID: "w"})
	reg, err := f.regs.Create(ctx, self, "w", canvas("100"))
	if err != nil || reg.DeploymentIDs == nil || len(reg.DeploymentIDs) != 0 {
		t.Fatalf("no deployments: %+v, %v", reg, err)
	}
	for range 2 { // the second changes nothing
		got, err := f.regs.AddDeployment(ctx, self, "w", reg.ID, "1:a")
		if err != nil || !slices.Equal(got.DeploymentIDs, []string{"1:a"}) {
			t.Fatalf("add: %+v, %v", got, err)
		}
	}
	_, err = f.regs.AddDeployment(ctx, self, "w", reg.ID, "tab\t")
	apptest.WantKind(t, err, fault.Invalid)
	_, err = f.regs.AddDeployment(ctx, self, "w", "nope", "2")
	apptest.WantKind(t, err, fault.NotFound)
	_, err = f.regs.RemoveDeployment(ctx, self, "w", reg.ID, "2")
	apptest.WantKind(t, err, fault.NotFound)
	got, err := f.regs.RemoveDeployment(ctx, self, "w", reg.ID, "1:a")
	if err != nil || len(got.DeploymentIDs) != 0 {
		t.Fatalf("remove: %+v, %v", got, err)
	}
}

// A deleted workspace's registrations are gone from the API (404) but keep
// their pairs, and come back with an undelete.
func TestDeletedWorkspaceKeepsItsRegistrations(t *testing.T) {
	f := newFixture(t, deps{})
	ctx := context.Background()
	_, self := f.create(f.root, app.CreateInput{ID: "w"})
	_, other := f.create(f.root, app.CreateInput{ID: "other"})
	reg, err := f.regs.Create(ctx, self, "w", canvas("100"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.app.DeleteWorkspace(ctx, f.root, "w", app.Precondition{}); err != nil {
		t.Fatal(err)
	}
	_, err = f.regs.List(ctx, f.root, "w")
	apptest.WantKind(t, err, fault.NotFound)
	_, err = f.regs.AddDeployment(ctx, f.root, "w", reg.ID, "1")
	apptest.WantKind(t, err, fault.NotFound)
	_, err = f.regs.Create(ctx, other, "other", canvas("100"))
	apptest.WantKind(t, err, fault.Conflict)
	if _, err := f.app.UndeleteWorkspace(ctx, f.root, "w"); err != nil {
		t.Fatal(err)
	}
	if got, err := f.regs.Get(ctx, f.root, "w", reg.ID); err != nil || got.ClientID != "100" {
		t.Fatalf("after the undelete: %+v, %v", got, err)
	}
}

// A reservation no workspace lists (a create that failed after reserving,
// a delete that stopped before releasing) holds its pair for a grace
// period, in case its create is still in flight, then is taken over.
func TestLeftoverLTIReservationIsTakenOver(t *testing.T) {
	c := &clock{now: time.Date(2026, 11, 25, 9, 0, 0, 0, time.UTC)}
	repo := memstore.New()
	f := newFixture(t, deps{repo: repo, now: c.Now})
	ctx := context.Background()
	_, self := f.create(f.root, app.CreateInput{ID: "w"})
	leftover := domain.LTIReservation{WorkspaceID: "gone", RegistrationID: "reg-gone", CreatedAt: c.Now()}
	if err := repo.ReserveLTIRegistration(ctx, "https://canvas.instructure.com", "100", leftover); err != nil {
		t.Fatal(err)
	}
	_, err := f.regs.Create(ctx, self, "w", canvas("100"))
	apptest.WantKind(t, err, fault.Conflict)
	c.Add(5 * time.Minute)
	reg, err := f.regs.Create(ctx, self, "w", canvas("100"))
	if err != nil {
		t.Fatalf("after the grace period: %v", err)
	}
	if res, err := repo.LTIReservation(ctx, "https://canvas.instructure.com", "100"); err != nil || res.RegistrationID != reg.ID {
		t.Fatalf("the reservation: %+v, %v; want the new registration's", res, err)
	}
}

// A refused create releases its reservation: the rule it broke on the
// workspace as written (here the bound of registrations) leaves the pair
// free.
func TestRefusedCreateReleasesItsPair(t *testing.T) {
	repo := memstore.New()
	f := newFixture(t, deps{repo: repo})
	ctx := context.Background()
	_, self := f.create(f.root, app.CreateInput{ID: "w"})
	for i := range ltidomain.MaxRegistrations {
		if _, err := f.regs.Create(ctx, self, "w", canvas(string(rune('a'+i)))); err != nil {
			t.Fatal(err)
		}
	}
	_, err := f.regs.Create(ctx, self, "w", canvas("one too many"))
	apptest.WantKind(t, err, fault.FailedPrecondition)
	if _, err := repo.LTIReservation(ctx, "https://canvas.instructure.com", "one too many"); !errors.Is(err, domain.ErrNotFound) {
		t.Fatalf("a refused create's reservation: %v", err)
	}
}

// Outbound URLs follow the configured rule: loopback only for the hosts
// LTI_ALLOW_INSECURE_HOSTS names.
func TestLTIURLsFollowTheConfiguredRule(t *testing.T) {
	ctx := context.Background()
	local := canvas("100")
	local.JWKSURL = "http://127.0.0.1:9999/jwks"
	f := newFixture(t, deps{})
	_, self := f.create(f.root, app.CreateInput{ID: "w"})
	_, err := f.regs.Create(ctx, self, "w", local)
	apptest.WantKind(t, err, fault.Invalid)

	policy, err := outbound.ParsePolicy("127.0.0.1:9999")
	if err != nil {
		t.Fatal(err)
	}
	allowed := newFixture(t, deps{policy: policy})
	_, self = allowed.create(allowed.root, app.CreateInput{ID: "w"})
	if _, err := allowed.regs.Create(ctx, self, "w", local); err != nil {
		t.Fatalf("an allowed host: %v", err)
	}
}
