package launchhealth_test

import (
	"context"
	"fmt"
	"os"
	"reflect"
	"testing"
	"time"

	"github.com/liveproctor/workspaces/services/workspace/internal/adapters/mongoconn/indexcheck"
	"github.com/liveproctor/workspaces/services/workspace/internal/adapters/mongoconn/mongotest"
	"github.com/liveproctor/workspaces/services/workspace/internal/lti/adapters/launchhealth"
	ltidomain "github.com/liveproctor/workspaces/services/workspace/internal/lti/domain"
)

// One FerretDB serves every test of the package, each test in a database
// of its own; every command is checked against the indexes (the store
// declares none: every query goes by _id).
var (
	commands = indexcheck.NewLog(indexcheck.Indexes{}, "find", "update", "delete")
	env      = mongotest.New(mongotest.Options{Name: "launchhealth", Commands: commands})
)

func TestMain(m *testing.M) {
	os.Exit(env.Run(m))
}

var at = time.Date(2026, 11, 28, 9, 0, 0, 0, time.UTC)

func failure(i int) ltidomain.LaunchFailure {
	return ltidomain.NewLaunchFailure(at.Add(time.Duration(i)*time.Second), fmt.Sprintf("refusal %d", i), fmt.Sprintf("req-%d", i))
}

// The store keeps what the domain's rules say (ltidomain.LaunchHealth's
// Accepted and Refused): the latest accepted launch whatever the order it
// is recorded in, and the newest refusals first, at most ten.
func TestRecordsFollowTheDomainsRules(t *testing.T) {
	ctx := context.Background()
	s := launchhealth.New(env.Database(t))
	var want ltidomain.LaunchHealth
	for _, launched := range []time.Time{at.Add(time.Hour), at, at.Add(2 * time.Hour), at.Add(90 * time.Minute)} {
		if err := s.Accepted(ctx, "springfield", "reg-1", launched); err != nil {
			t.Fatal(err)
		}
		want = want.Accepted(launched)
	}
	for i := range ltidomain.MaxRecentFailures + 3 {
		if err := s.Refused(ctx, "springfield", []string{"reg-1"}, failure(i)); err != nil {
			t.Fatal(err)
		}
		want = want.Refused(failure(i))
	}
	got, err := s.Health(ctx, "springfield", []string{"reg-1"})
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got["reg-1"], want) {
		t.Fatalf("read back\n%+v\nwant\n%+v", got["reg-1"], want)
	}
	if h := got["reg-1"]; !h.LastLaunchAt.Equal(at.Add(2*time.Hour)) || len(h.Failures) != ltidomain.MaxRecentFailures ||
		h.Failures[0].Reason != "refusal 12" || h.Failures[9].Reason != "refusal 3" {
		t.Fatalf("the latest launch and the ten newest refusals, newest first: %+v", h)
	}
}

// A refusal told to several registrations reaches each in one command; a
// record is read for its own workspace only, all of an answer's in one
// query, and goes with its registration.
func TestSeveralRegistrationsAndWorkspaces(t *testing.T) {
	ctx := context.Background()
	db := env.Database(t)
	s := launchhealth.New(db)
	mark := commands.Mark(db.Name())
	if err := s.Refused(ctx, "springfield", []string{"reg-1", "reg-2"}, failure(1)); err != nil {
		t.Fatal(err)
	}
	if got := commands.Since(db.Name(), mark); len(got) != 1 || got[0] != "update lti_launch_health" {
		t.Fatalf("a refusal of two registrations sent %v", got)
	}
	if err := s.Accepted(ctx, "springfield", "reg-2", at); err != nil {
		t.Fatal(err)
	}
	if err := s.Accepted(ctx, "shelbyville", "reg-3", at); err != nil {
		t.Fatal(err)
	}

	mark = commands.Mark(db.Name())
	got, err := s.Health(ctx, "springfield", []string{"reg-1", "reg-2", "reg-3", "reg-4"})
	if err != nil {
		t.Fatal(err)
	}
	if sent := commands.Since(db.Name(), mark); len(sent) != 1 || sent[0] != "find lti_launch_health" {
		t.Fatalf("a read of four registrations sent %v", sent)
	}
	want := map[string]ltidomain.LaunchHealth{
		"reg-1": {Failures: []ltidomain.LaunchFailure{failure(1)}},
		"reg-2": {LastLaunchAt: at, Failures: []ltidomain.LaunchFailure{failure(1)}},
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("springfield's records: %+v, want %+v", got, want)
	}
	if got, err := s.Health(ctx, "springfield", []string{"reg-3"}); err != nil || len(got) != 0 {
		t.Fatalf("shelbyville's record read as springfield's: %+v, %v", got, err)
	}

	if err := s.Forget(ctx, "shelbyville", "reg-2"); err != nil {
		t.Fatal(err)
	}
	if err := s.Forget(ctx, "springfield", "reg-2"); err != nil {
		t.Fatal(err)
	}
	got, err = s.Health(ctx, "springfield", []string{"reg-1", "reg-2"})
	if err != nil || len(got) != 1 || len(got["reg-1"].Failures) != 1 {
		t.Fatalf("after reg-2 was forgotten: %+v, %v", got, err)
	}
}
