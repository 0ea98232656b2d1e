package repotest

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"testing"

	"github.com/liveproctor/workspaces/services/workspace/internal/domain"
	ltidomain "github.com/liveproctor/workspaces/services/workspace/internal/lti/domain"
)

// The LTI 1.3 registrations: listed in the workspace by its revision-checked
// Update, their (issuer, client id) pairs reserved store-wide.

const (
	canvasIssuer = "https://canvas.instructure.com"
	moodleIssuer = "https://moodle.example.edu"
)

// platform is a registration of issuer and clientID as a caller sends it.
func platform(issuer, clientID string, deployments ...string) ltidomain.NewRegistration {
	token := issuer + "/login/oauth2/token"
	return ltidomain.NewRegistration{
		Issuer: issuer, ClientID: clientID, DeploymentIDs: deployments,
		AuthLoginURL: issuer + "/api/lti/authorize_redirect", JWKSURL: issuer + "/api/lti/security/jwks", AuthTokenURL: &token,
	}
}

// ltiRegistrationsChangeThroughUpdate: a registration reserved and added
// is stored with the workspace, found by its pair, changed and removed by
// Update; a stale writer cannot drop it; once removed and released its pair
// finds nothing and is free again.
func ltiRegistrationsChangeThroughUpdate(t *testing.T, r domain.Repository) {
	ctx := context.Background()
	mustCreate(t, r, sample("a"))
	w := mustGet(t, r, "a")
	stale := mustGet(t, r, "a")
	if err := r.ReserveLTIRegistration(ctx, canvasIssuer, "10000000000001", domain.LTIReservation{WorkspaceID: "a", RegistrationID: "reg-1", CreatedAt: t1}); err != nil {
		t.Fatal(err)
	}
	added, err := w.AddLTIRegistration("reg-1", platform(canvasIssuer, "10000000000001", "1:abc"), ltidomain.URLPolicy{}, t1)
	if err != nil {
		t.Fatal(err)
	}
	stored := mustUpdate(t, r, w)
	got, err := domain.WorkspaceOfLTIRegistration(ctx, r, canvasIssuer, "10000000000001")
	if err != nil || got.ID() != "a" {
		t.Fatalf("WorkspaceOfLTIRegistration = %v, %v; want a", got, err)
	}
	if diff := compare(got, stored); diff != "" {
		t.Fatalf("Update returned another workspace than is stored: %s", diff)
	}
	if reg, ok := got.LTIRegistrations().Get("reg-1"); !ok || fmt.Sprintf("%#v", ltiRegistrations([]ltidomain.Registration{reg})) !=
		fmt.Sprintf("%#v", ltiRegistrations([]ltidomain.Registration{added})) {
		t.Fatalf("the registration as stored: %+v, want %+v", reg, added)
	}
	renamed := "Renamed"
	if err := stale.Update(domain.Changes{Name: &renamed}, t1); err != nil {
		t.Fatal(err)
	}
	_, err = r.Update(ctx, stale)
	wantErr(t, "stale Update", err, domain.ErrRevisionChanged)

	if _, _, err := got.AddLTIDeployment("reg-1", "2:def", t1); err != nil {
		t.Fatal(err)
	}
	got = mustUpdate(t, r, got)
	if reg, _ := mustGet(t, r, "a").LTIRegistrations().Get("reg-1"); fmt.Sprint(reg.DeploymentIDs) != "[1:abc 2:def]" {
		t.Fatalf("deployment ids after adding one: %v", reg.DeploymentIDs)
	}
	if _, err := got.RemoveLTIRegistration("reg-1", t1); err != nil {
		t.Fatal(err)
	}
	mustUpdate(t, r, got)
	_, err = domain.WorkspaceOfLTIRegistration(ctx, r, canvasIssuer, "10000000000001")
	wantErr(t, "WorkspaceOfLTIRegistration of a removed registration", err, domain.ErrNotFound)
	if err := r.ReleaseLTIRegistration(ctx, canvasIssuer, "10000000000001", "reg-1"); err != nil {
		t.Fatal(err)
	}
	_, err = r.LTIReservation(ctx, canvasIssuer, "10000000000001")
	wantErr(t, "LTIReservation after the release", err, domain.ErrNotFound)
}

// ltiReservationIsStoreWide: a pair reserved for one workspace is taken
// for every other; the reservation says who holds it; a release by another
// registration leaves it; a reservation no workspace lists finds nothing.
func ltiReservationIsStoreWide(t *testing.T, r domain.Repository) {
	ctx := context.Background()
	mustCreate(t, r, sample("a"))
	mustCreate(t, r, sample("b"))
	held := domain.LTIReservation{WorkspaceID: "a", RegistrationID: "reg-a", CreatedAt: t0}
	if err := r.ReserveLTIRegistration(ctx, moodleIssuer, "client", held); err != nil {
		t.Fatal(err)
	}
	wantErr(t, "a second reservation of the pair",
		r.ReserveLTIRegistration(ctx, moodleIssuer, "client", domain.LTIReservation{WorkspaceID: "b", RegistrationID: "reg-b", CreatedAt: t1}),
		ltidomain.ErrRegistrationTaken)
	// Another client id, or the issuer spelled otherwise, is another pair.
	for _, pair := range [][2]string{{moodleIssuer, "client2"}, {moodleIssuer + "/", "client"}, {"https://MOODLE.example.edu", "client"}} {
		if err := r.ReserveLTIRegistration(ctx, pair[0], pair[1], domain.LTIReservation{WorkspaceID: "b", RegistrationID: "reg-" + pair[1], CreatedAt: t1}); err != nil {
			t.Fatalf("reserve %v: %v", pair, err)
		}
	}
	got, err := r.LTIReservation(ctx, moodleIssuer, "client")
	if err != nil || got.WorkspaceID != "a" || got.RegistrationID != "reg-a" || !ms(got.CreatedAt).Equal(t0) {
		t.Fatalf("LTIReservation = %+v, %v; want a's", got, err)
	}
	if err := r.ReleaseLTIRegistration(ctx, moodleIssuer, "client", "reg-b"); err != nil {
		t.Fatal(err)
	}
	if got, err := r.LTIReservation(ctx, moodleIssuer, "client"); err != nil || got.RegistrationID != "reg-a" {
		t.Fatalf("after another registration's release: %+v, %v; want a's to stay", got, err)
	}
	// Reserved, but no workspace lists it: launches find nothing.
	_, err = domain.WorkspaceOfLTIRegistration(ctx, r, moodleIssuer, "client")
	wantErr(t, "WorkspaceOfLTIRegistration of an unlisted reservation", err, domain.ErrNotFound)
	_, err = domain.WorkspaceOfLTIRegistration(ctx, r, moodleIssuer, "never-reserved")
	wantErr(t, "WorkspaceOfLTIRegistration of a pair never reserved", err, domain.ErrNotFound)
}

// concurrentLTIReservationsHaveOneWinner: creates of one pair racing each
// other (from two workspaces) leave exactly one reservation.
func concurrentLTIReservationsHaveOneWinner(t *testing.T, r domain.Repository) {
	ctx := context.Background()
	for round := range concurrentRounds {
		clientID := fmt.Sprintf("client-%d", round)
		errs := race(concurrentWriters, func(i int) error {
			res := domain.LTIReservation{WorkspaceID: []string{"a", "b"}[i%2], RegistrationID: fmt.Sprintf("reg-%d", i), CreatedAt: t0}
			return r.ReserveLTIRegistration(ctx, canvasIssuer, clientID, res)
		})
		won := -1
		for i, err := range errs {
			switch {
			case err == nil && won >= 0:
				t.Fatalf("round %d: reservations %d and %d both won", round, won, i)
			case err == nil:
				won = i
			case !errors.Is(err, ltidomain.ErrRegistrationTaken):
				t.Fatalf("round %d, reservation %d: %v, want ErrRegistrationTaken", round, i, err)
			}
		}
		if won < 0 {
			t.Fatalf("round %d: no reservation won", round)
		}
		if got, err := r.LTIReservation(ctx, canvasIssuer, clientID); err != nil || got.RegistrationID != fmt.Sprintf("reg-%d", won) {
			t.Fatalf("round %d: the reservation is %+v, %v; want reg-%d's", round, got, err, won)
		}
	}
}

// workspacesWithLTIIssuer: the active workspaces listing a registration
// of an issuer (compared exactly), narrowed to one holding a deployment id
// when one is given: both must hold in one registration, another issuer's
// registration with that deployment id never counts, nor does a deleted
// workspace's; at most the limit.
func workspacesWithLTIIssuer(t *testing.T, r domain.Repository) {
	ctx := context.Background()
	registered := map[string][]ltidomain.NewRegistration{
		"a": {platform(moodleIssuer, "a1", "1", "2"), platform(canvasIssuer, "a2", "9")},
		"b": {platform(moodleIssuer, "b1", "3")},
		"c": {platform(canvasIssuer, "c1", "1"), platform(moodleIssuer+"/", "c2", "1")},
		// Moodle's registration and deployment 5 are in two registrations.
		"e": {platform(moodleIssuer, "e1", "x"), platform(canvasIssuer, "e2", "5")},
		"d": {platform(moodleIssuer, "d1", "1", "4")},
	}
	for _, id := range slices.Sorted(maps.Keys(registered)) {
		mustCreate(t, r, sample(id))
		w := mustGet(t, r, id)
		for i, in := range registered[id] {
			if _, err := w.AddLTIRegistration(fmt.Sprint(id, "-reg-", i), in, ltidomain.URLPolicy{}, t1); err != nil {
				t.Fatal(err)
			}
		}
		if id == "d" {
			if err := w.Delete(t1); err != nil {
				t.Fatal(err)
			}
		}
		mustUpdate(t, r, w)
	}
	want := func(issuer, deploymentID string, limit int, want ...string) {
		t.Helper()
		got, err := r.WorkspacesWithLTIIssuer(ctx, issuer, deploymentID, limit)
		if err != nil {
			t.Fatal(err)
		}
		gotIDs := ids(got)
		slices.Sort(gotIDs)
		wantIDs(t, fmt.Sprintf("WorkspacesWithLTIIssuer(%q, %q, %d)", issuer, deploymentID, limit), gotIDs, want)
	}
	want(moodleIssuer, "1", 10, "a")
	want(moodleIssuer, "2", 10, "a")
	want(moodleIssuer, "3", 10, "b")
	want(moodleIssuer, "4", 10)
	want(moodleIssuer, "5", 10)
	want(moodleIssuer, "9", 10)
	want(moodleIssuer, "", 10, "a", "b", "e")
	want(moodleIssuer+"/", "1", 10, "c")
	want(canvasIssuer, "1", 10, "c")
	want("https://MOODLE.example.edu", "", 10)
	if got, err := r.WorkspacesWithLTIIssuer(ctx, moodleIssuer, "", 2); err != nil || len(got) != 2 {
		t.Fatalf("WorkspacesWithLTIIssuer with a limit of 2: %d workspaces, %v", len(got), err)
	}
}
