package launchstore_test

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/liveproctor/workspaces/services/workspace/internal/adapters/mongoconn/indexcheck"
	"github.com/liveproctor/workspaces/services/workspace/internal/adapters/mongoconn/mongotest"
	"github.com/liveproctor/workspaces/services/workspace/internal/lti/adapters/launchstore"
	ltiapp "github.com/liveproctor/workspaces/services/workspace/internal/lti/app"
	ltidomain "github.com/liveproctor/workspaces/services/workspace/internal/lti/domain"
)

// One FerretDB serves every test of the package, each test in a database
// of its own; every command is checked against the declared indexes.
var (
	commands = indexcheck.NewLog(launchstore.DeclaredIndexes(), "find")
	env      = mongotest.New(mongotest.Options{Name: "launchstore", Commands: commands})
)

func TestMain(m *testing.M) {
	os.Exit(env.Run(m))
}

const retention = 8*time.Hour + 720*time.Hour

func record(id, workspaceID string, at time.Time) ltiapp.LTI13LaunchRecord {
	return ltiapp.LTI13LaunchRecord{
		ID: id, WorkspaceID: workspaceID, RegistrationID: "reg-1", DeploymentID: "1:abc", ContextID: "course-9",
		ResourceLinkID: "link-1", Subject: "user-7", Email: "ada@example.edu",
		Roles: []string{"http://purl.imsglobal.org/vocab/lis/v2/membership#Instructor"},
		Services: ltidomain.LTI13Services{
			LineItems: "https://lms.example.edu/c/9/lineitems?type=x", LineItem: "https://lms.example.edu/c/9/lineitems/4?type=x",
			Scopes: []string{"https://purl.imsglobal.org/spec/lti-ags/scope/score"}, MembershipsURL: "https://lms.example.edu/c/9/memberships",
		},
		ExamConfigID: "3f2a6c1e-8d4b-4e2a-9c1f-5b7d2e8a4c6f",
		LaunchedAt:   at,
	}
}

// A launch reads back as it was kept, for its own workspace only, and
// only within the retention; the TTL index holds the same retention.
func TestPutGet(t *testing.T) {
	ctx := context.Background()
	now := time.Date(2026, 11, 28, 9, 0, 0, 0, time.UTC)
	db := env.Database(t)
	s := launchstore.New(db, retention, launchstore.WithClock(func() time.Time { return now }))
	if err := s.Prepare(ctx); err != nil {
		t.Fatal(err)
	}
	indexcheck.WantTTL(t, db.Collection(launchstore.Collection), "expiry", int32(retention/time.Second))
	kept := record("l1", "springfield", now.Add(-time.Hour))
	old := record("l2", "springfield", now.Add(-retention-time.Second))
	bare := record("l3", "springfield", now)
	bare.ContextID, bare.Roles, bare.Services, bare.ExamConfigID = "", nil, ltidomain.LTI13Services{}, ""
	for _, r := range []ltiapp.LTI13LaunchRecord{kept, old, bare} {
		if err := s.Put(ctx, r); err != nil {
			t.Fatal(err)
		}
	}
	got, ok, err := s.Get(ctx, "springfield", "l1")
	if err != nil || !ok || fmt.Sprint(got) != fmt.Sprint(kept) {
		t.Fatalf("got %+v, %v, %v; want %+v", got, ok, err, kept)
	}
	got, ok, err = s.Get(ctx, "springfield", "l3")
	if err != nil || !ok || got.ContextID != "" || len(got.Roles) != 0 || fmt.Sprint(got.Services) != fmt.Sprint(ltidomain.LTI13Services{}) {
		t.Fatalf("a launch without context, roles or services: %+v, %v, %v", got, ok, err)
	}
	for _, c := range []struct{ ws, id string }{{"shelbyville", "l1"}, {"springfield", "l2"}, {"springfield", "nope"}} {
		if r, ok, err := s.Get(ctx, c.ws, c.id); err != nil || ok {
			t.Fatalf("%s's %s: %+v, %v, %v", c.ws, c.id, r, ok, err)
		}
	}
	// Started again with another grace, the store moves the TTL.
	if err := launchstore.New(db, 8*time.Hour+time.Hour).Prepare(ctx); err != nil {
		t.Fatal(err)
	}
	indexcheck.WantTTL(t, db.Collection(launchstore.Collection), "expiry", int32((9*time.Hour)/time.Second))
}
