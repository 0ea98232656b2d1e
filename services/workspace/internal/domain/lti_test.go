package domain_test

import (
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/liveproctor/workspaces/pkg/fault"
	"github.com/liveproctor/workspaces/services/workspace/internal/domain"
	ltidomain "github.com/liveproctor/workspaces/services/workspace/internal/lti/domain"
	"github.com/liveproctor/workspaces/services/workspace/internal/lti/domain/ltidomaintest"
)

// What the workspace holds for LTI (lti.go): the rules of registrations are
// the LTI context's and tested there; these check what the workspace adds,
// its deleted state and its events, with the rules in place.

func TestLTIKey(t *testing.T) {
	root := mustRoot(t)
	w := mustCreate(t, "w", root)
	if k, err := w.LTIKey("w-lti", t0); err != nil || k.Role != domain.RoleLTI {
		t.Fatalf("LTIKey of the LTI pair = %+v, %v", k, err)
	}
	for key, want := range map[string]error{"w-server": ltidomain.ErrLaunchNotLTIKey, "nope": ltidomain.ErrLaunchUnknownKey} {
		if _, err := w.LTIKey(key, t0); !errors.Is(err, want) {
			t.Errorf("LTIKey(%s) = %v, want %v", key, err, want)
		}
	}
	if _, err := root.LTIKey("root-key", t0); !errors.Is(err, ltidomain.ErrLaunchNotLTIKey) {
		t.Errorf("the root's bootstrap pair: %v", err)
	}
	if err := w.Delete(t0); err != nil {
		t.Fatal(err)
	}
	if _, err := w.LTIKey("w-lti", t0); !errors.Is(err, ltidomain.ErrLaunchWorkspaceDeleted) {
		t.Errorf("LTIKey of a deleted workspace: %v", err)
	}
}

func TestLTIRegistrationLife(t *testing.T) {
	w := mustCreate(t, "w", mustRoot(t))
	now := time.Date(2026, 11, 25, 9, 0, 0, 0, time.UTC)
	reg, err := w.AddLTIRegistration("reg-1", ltidomaintest.ValidRegistration(), ltidomain.URLPolicy{}, now)
	if err != nil {
		t.Fatal(err)
	}
	if reg.ID != "reg-1" || reg.AuthTokenURL == "" || !reg.CreatedAt.Equal(now) || !reg.HasDeployment("1:8865aa05b4b79b64a91a86042e43af5ea8ae79eb") {
		t.Fatalf("added: %+v", reg)
	}
	// The pair is this workspace's already.
	_, err = w.AddLTIRegistration("reg-2", ltidomaintest.ValidRegistration(), ltidomain.URLPolicy{}, now)
	if !errors.Is(err, ltidomain.ErrRegistrationTaken) {
		t.Fatalf("the same pair again: %v", err)
	}
	if found, ok := w.LTIRegistrations().For("https://canvas.instructure.com", "10000000000001"); !ok || found.ID != "reg-1" {
		t.Fatalf("LTIRegistrations().For: %+v, %v", found, ok)
	}
	if _, ok := w.LTIRegistrations().For("https://canvas.instructure.com/", "10000000000001"); ok {
		t.Fatal("the issuer is compared as an exact string")
	}

	later := now.Add(time.Minute)
	r, added, err := w.AddLTIDeployment("reg-1", "2:x", later)
	if err != nil || !added || !slices.Equal(r.DeploymentIDs, []string{"1:8865aa05b4b79b64a91a86042e43af5ea8ae79eb", "2:x"}) || !r.UpdatedAt.Equal(later) {
		t.Fatalf("add a deployment: %+v, %v, %v", r, added, err)
	}
	if _, added, err := w.AddLTIDeployment("reg-1", "2:x", later); err != nil || added {
		t.Fatalf("add it again: %v, %v; want no change", added, err)
	}
	if _, _, err := w.AddLTIDeployment("reg-1", "", later); fault.KindOf(err) != fault.Invalid || ltidomaintest.Violated(err)["deploymentId"] == "" {
		t.Fatalf("an empty deployment id: %v", err)
	}
	if _, _, err := w.AddLTIDeployment("nope", "3", later); !errors.Is(err, ltidomain.ErrRegistrationNotFound) {
		t.Fatalf("an unknown registration: %v", err)
	}
	if _, err := w.RemoveLTIDeployment("reg-1", "9", later); !errors.Is(err, ltidomain.ErrDeploymentNotFound) {
		t.Fatalf("remove an unknown deployment: %v", err)
	}
	if r, err := w.RemoveLTIDeployment("reg-1", "2:x", later); err != nil || len(r.DeploymentIDs) != 1 {
		t.Fatalf("remove a deployment: %+v, %v", r, err)
	}
	removed, err := w.RemoveLTIRegistration("reg-1", later)
	if err != nil || removed.ID != "reg-1" || w.LTIRegistrations().Len() != 0 {
		t.Fatalf("remove: %+v, %v; left %v", removed, err, w.LTIRegistrations().All())
	}
	if _, err := w.RemoveLTIRegistration("reg-1", later); !errors.Is(err, ltidomain.ErrRegistrationNotFound) {
		t.Fatalf("remove again: %v", err)
	}

	var types []domain.EventType
	for _, e := range w.PendingEvents() {
		if e.Target.Type == domain.TargetLTIRegistration {
			types = append(types, e.Type)
		}
	}
	want := []domain.EventType{domain.EventLTIRegistrationCreated, domain.EventLTIDeploymentAdded,
		domain.EventLTIDeploymentRemoved, domain.EventLTIRegistrationDeleted}
	if !slices.Equal(types, want) {
		t.Fatalf("events %v, want %v", types, want)
	}
}

func TestLTIRegistrationBounds(t *testing.T) {
	w := mustCreate(t, "w", mustRoot(t))
	now := time.Date(2026, 11, 25, 9, 0, 0, 0, time.UTC)
	for i := range ltidomain.MaxRegistrations {
		r := ltidomaintest.ValidRegistration()
		r.ClientID = fmt.Sprint(i)
		if _, err := w.AddLTIRegistration(fmt.Sprint("reg-", i), r, ltidomain.URLPolicy{}, now); err != nil {
			t.Fatal(err)
		}
	}
	r := ltidomaintest.ValidRegistration()
	r.ClientID = "one too many"
	if _, err := w.AddLTIRegistration("reg-x", r, ltidomain.URLPolicy{}, now); !errors.Is(err, ltidomain.ErrTooManyRegistrations) {
		t.Fatalf("a 21st registration: %v", err)
	}
	for i := len(ltidomaintest.ValidRegistration().DeploymentIDs); i < ltidomain.MaxDeployments; i++ {
		if _, _, err := w.AddLTIDeployment("reg-0", fmt.Sprint("d", i), now); err != nil {
			t.Fatal(err)
		}
	}
	if _, _, err := w.AddLTIDeployment("reg-0", "d-x", now); !errors.Is(err, ltidomain.ErrTooManyDeployments) {
		t.Fatalf("a 101st deployment id: %v", err)
	}
	if err := w.Delete(now); err != nil {
		t.Fatal(err)
	}
	if _, err := w.RemoveLTIRegistration("reg-0", now); !errors.Is(err, domain.ErrDeleted) {
		t.Fatalf("a deleted workspace's registration: %v", err)
	}
}
