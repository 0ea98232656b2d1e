package app_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/liveproctor/workspaces/pkg/fault"
	"github.com/liveproctor/workspaces/services/workspace/internal/app"
	"github.com/liveproctor/workspaces/services/workspace/internal/app/apptest"
	ltiapp "github.com/liveproctor/workspaces/services/workspace/internal/lti/app"
	ltidomain "github.com/liveproctor/workspaces/services/workspace/internal/lti/domain"
)

// Every answer that renders a registration carries its launch health; a
// new registration's is empty, and a deleted one's goes with it.
func TestRegistrationAnswersCarryTheirLaunchHealth(t *testing.T) {
	lf := newLTI13Fixture(t)
	ctx := context.Background()
	lf.login("s1", lf.reg)
	if _, err := lf.launch(lf.sign(lf.claims("s1"), "k1"), "s1", "s1"); err != nil {
		t.Fatal(err)
	}
	launched := lf.clock.Now()
	lf.clock.Add(time.Minute)
	lf.login("s2", lf.reg)
	if _, err := lf.launch(lf.sign(lf.claims("s2"), "k-rotated"), "s2", "s2"); err == nil {
		t.Fatal("a launch signed with an unknown key was accepted")
	}
	refused := ltidomain.LaunchFailure{At: lf.clock.Now(), Reason: "key not found: the platform's key set (the registration's jwksUrl) has no key with the id_token's kid",
		RequestID: "req-launch"}
	wantHealth := func(what string, got ltiapp.RegistrationView) {
		t.Helper()
		if !got.Health.LastLaunchAt.Equal(launched) || len(got.Health.Failures) != 1 || got.Health.Failures[0] != refused {
			t.Fatalf("%s: health %+v, want the launch at %v and %+v", what, got.Health, launched, refused)
		}
	}

	got, err := lf.regs.Get(ctx, lf.self, "school", lf.reg.ID)
	if err != nil {
		t.Fatal(err)
	}
	wantHealth("get", got)
	list, err := lf.regs.List(ctx, lf.self, "school")
	if err != nil || len(list) != 2 || list[0].ID != lf.reg.ID || list[1].ID != lf.other.ID {
		t.Fatalf("list: %+v, %v", list, err)
	}
	wantHealth("list", list[0])
	if h := list[1].Health; !h.LastLaunchAt.IsZero() || len(h.Failures) != 0 {
		t.Fatalf("the other registration's health: %+v", h)
	}
	if got, err = lf.regs.AddDeployment(ctx, lf.self, "school", lf.reg.ID, "dep-2"); err != nil {
		t.Fatal(err)
	}
	wantHealth("add a deployment", got)
	if got, err = lf.regs.RemoveDeployment(ctx, lf.self, "school", lf.reg.ID, "dep-2"); err != nil {
		t.Fatal(err)
	}
	wantHealth("remove a deployment", got)
	if got, err = lf.regs.Delete(ctx, lf.self, "school", lf.reg.ID); err != nil {
		t.Fatal(err)
	}
	wantHealth("delete", got)
	if h := lf.health.of(lf.reg.ID); !h.LastLaunchAt.IsZero() || len(h.Failures) != 0 {
		t.Fatalf("a deleted registration's health was kept: %+v", h)
	}

	created, err := lf.regs.Create(ctx, lf.self, "school", canvas("100", "1:a"))
	if err != nil || !created.Health.LastLaunchAt.IsZero() || created.Health.Failures != nil {
		t.Fatalf("a new registration: %+v, %v", created, err)
	}
}

// A tenant reads its own registrations' health only: the store is asked
// for the workspace's records.
func TestLaunchHealthIsReadForTheWorkspace(t *testing.T) {
	lf := newLTI13Fixture(t)
	ctx := context.Background()
	// A record of the same registration id under another workspace (no
	// registration id is reused; the store's filter holds them apart
	// all the same).
	if err := lf.health.Refused(ctx, "elsewhere", []string{lf.reg.ID}, ltidomain.NewLaunchFailure(lf.clock.Now(), "theirs", "r")); err != nil {
		t.Fatal(err)
	}
	got, err := lf.regs.Get(ctx, lf.self, "school", lf.reg.ID)
	if err != nil || len(got.Health.Failures) != 0 {
		t.Fatalf("school's registration read another workspace's record: %+v, %v", got.Health, err)
	}
}

// Recording never changes a launch's answer: with the launch health's
// store down, an accepted launch is accepted and a refused one refused as
// before. Answers that render a registration cannot do without it: they
// are refused, Unavailable, and a change is not made.
func TestLaunchHealthDownChangesNoLaunch(t *testing.T) {
	lf := newLTI13Fixture(t)
	ctx := context.Background()
	lf.health.setDown(true)
	lf.login("s1", lf.reg)
	if l, err := lf.launch(lf.sign(lf.claims("s1"), "k1"), "s1", "s1"); err != nil || l.ID == "" {
		t.Fatalf("an accepted launch with the health down: %+v, %v", l, err)
	}
	lf.login("s2", lf.reg)
	c := lf.claims("s2")
	c["https://purl.imsglobal.org/spec/lti/claim/deployment_id"] = "dep-9"
	if _, err := lf.launch(lf.sign(c, "k1"), "s2", "s2"); !errors.Is(err, ltidomain.ErrLTI13Deployment) {
		t.Fatalf("a refused launch with the health down: %v, want %v", err, ltidomain.ErrLTI13Deployment)
	}
	if lf.health.writes != 2 {
		t.Fatalf("%d writes tried, want one per launch", lf.health.writes)
	}

	_, err := lf.regs.Get(ctx, lf.self, "school", lf.reg.ID)
	apptest.WantKind(t, err, fault.Unavailable)
	_, err = lf.regs.AddDeployment(ctx, lf.self, "school", lf.reg.ID, "dep-2")
	apptest.WantKind(t, err, fault.Unavailable)
	lf.health.setDown(false)
	if got, err := lf.regs.Get(ctx, lf.self, "school", lf.reg.ID); err != nil || slices.Contains(got.DeploymentIDs, "dep-2") {
		t.Fatalf("after a refused add: %+v, %v", got, err)
	}
}

// A refused login is recorded on the registration it names (a deployment
// it does not hold, another target link); one that no registration owns,
// on every registration of its issuer when they are one workspace's, with
// what it sent; nothing when they are several workspaces', nor for
// parameters that name nothing.
func TestRefusedLoginsAreRecorded(t *testing.T) {
	f := newLoginFixture(t)
	ctx := context.Background()
	second, err := f.regs.Create(ctx, f.self, "w", canvas("200", "2:b"))
	if err != nil {
		t.Fatal(err)
	}
	change := func(edit func(*ltidomain.LTI13LoginInitiation)) ltidomain.LTI13LoginInitiation {
		in := canvasLogin()
		edit(&in)
		return in
	}
	// latest is the newest failure of each of w's registrations, "" for
	// none since the last call.
	seen := map[string]int{}
	latest := func() (first, other string) {
		t.Helper()
		read := func(id string) string {
			failures := f.health.of(id).Failures
			defer func() { seen[id] = len(failures) }()
			if len(failures) == seen[id] {
				return ""
			}
			if failures[0].RequestID != "req-login" {
				t.Fatalf("recorded in request %q", failures[0].RequestID)
			}
			return failures[0].Reason
		}
		return read(f.reg.ID), read(second.ID)
	}
	for _, tc := range []struct {
		name         string
		in           ltidomain.LTI13LoginInitiation
		first, other string // in the reasons recorded; "" for none
	}{
		{"a deployment the registration does not hold", change(func(in *ltidomain.LTI13LoginInitiation) { in.DeploymentID = "9:z" }),
			ltidomain.ErrLTI13LoginDeployment.Message, ""},
		{"another target link", change(func(in *ltidomain.LTI13LoginInitiation) { in.TargetLinkURI = "https://lti.test/lti/v1/launch" }),
			"must be this tool's launch URL", ""},
		{"an unknown client_id", change(func(in *ltidomain.LTI13LoginInitiation) { in.ClientID = "999" }),
			`client_id "999", which no registration of this issuer holds`, `client_id "999", which no registration of this issuer holds`},
		{"no client_id, an unknown deployment", change(func(in *ltidomain.LTI13LoginInitiation) { in.ClientID, in.DeploymentID = "", "9:z" }),
			`lti_deployment_id "9:z", which no registration of this issuer holds`, `lti_deployment_id "9:z", which no registration`},
		{"no client_id nor deployment", change(func(in *ltidomain.LTI13LoginInitiation) { in.ClientID, in.DeploymentID = "", "" }),
			"sent no client_id to tell which", "sent no client_id to tell which"},
		{"no login_hint", change(func(in *ltidomain.LTI13LoginInitiation) { in.LoginHint = "" }), "", ""},
		{"an unknown issuer", change(func(in *ltidomain.LTI13LoginInitiation) { in.Issuer += "/" }), "", ""},
		{"an accepted login", canvasLogin(), "", ""},
	} {
		_, err := f.logins13.Start(ctx, "req-login", tc.in)
		if tc.name != "an accepted login" && err == nil {
			t.Fatalf("%s: accepted", tc.name)
		}
		first, other := latest()
		if !strings.Contains(first, tc.first) || (tc.first == "") != (first == "") ||
			!strings.Contains(other, tc.other) || (tc.other == "") != (other == "") {
			t.Fatalf("%s: recorded %q and %q, want %q and %q", tc.name, first, other, tc.first, tc.other)
		}
	}

	// Once the issuer is another workspace's too, a login that no
	// registration owns is nobody's: a school reads nothing of another's.
	_, other := f.create(f.root, app.CreateInput{ID: "x"})
	if _, err := f.regs.Create(ctx, other, "x", canvas("300", "3:c")); err != nil {
		t.Fatal(err)
	}
	for _, in := range []ltidomain.LTI13LoginInitiation{
		change(func(in *ltidomain.LTI13LoginInitiation) { in.ClientID = "999" }),
		change(func(in *ltidomain.LTI13LoginInitiation) { in.ClientID, in.DeploymentID = "", "9:z" }),
	} {
		if _, err := f.logins13.Start(ctx, "req-login", in); err == nil {
			t.Fatalf("%+v: accepted", in)
		}
		if first, second := latest(); first != "" || second != "" {
			t.Fatalf("%+v: recorded %q and %q in a shared issuer's registrations", in, first, second)
		}
	}
	// A registration's own refusals are still its.
	if _, err := f.logins13.Start(ctx, "req-login", change(func(in *ltidomain.LTI13LoginInitiation) { in.DeploymentID = "9:z" })); err == nil {
		t.Fatal("an unregistered deployment was accepted")
	}
	if first, _ := latest(); first != ltidomain.ErrLTI13LoginDeployment.Message {
		t.Fatalf("recorded %q", first)
	}
}

// A replica records a registration's accepted launches at most once per
// ltidomain.LastLaunchGranularity: a class launching at once costs its
// record one write.
func TestAcceptedLaunchesRecordedCoarsely(t *testing.T) {
	lf := newLTI13Fixture(t)
	for i, s := range []string{"s1", "s2", "s3"} {
		lf.login(s, lf.reg)
		if _, err := lf.launch(lf.sign(lf.claims(s), "k1"), s, s); err != nil {
			t.Fatalf("launch %d: %v", i+1, err)
		}
	}
	first := lf.clock.Now()
	if n := lf.health.writeCount(); n != 1 {
		t.Fatalf("%d writes for three launches within a minute, want 1", n)
	}
	lf.clock.Add(ltidomain.LastLaunchGranularity)
	lf.login("s4", lf.reg)
	if _, err := lf.launch(lf.sign(lf.claims("s4"), "k1"), "s4", "s4"); err != nil {
		t.Fatal(err)
	}
	if h := lf.health.of(lf.reg.ID); lf.health.writeCount() != 2 || !h.LastLaunchAt.Equal(first.Add(ltidomain.LastLaunchGranularity)) {
		t.Fatalf("after a minute: %d writes, lastLaunchAt %v; want 2 and the latest launch", lf.health.writeCount(), h.LastLaunchAt)
	}
}
