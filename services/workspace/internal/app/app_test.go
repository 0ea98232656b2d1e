package app_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/liveproctor/workspaces/pkg/fault"
	"github.com/liveproctor/workspaces/services/workspace/internal/adapters/memstore"
	"github.com/liveproctor/workspaces/services/workspace/internal/adapters/secretbox"
	"github.com/liveproctor/workspaces/services/workspace/internal/app"
	"github.com/liveproctor/workspaces/services/workspace/internal/app/apptest"
	"github.com/liveproctor/workspaces/services/workspace/internal/domain"
	ltidomain "github.com/liveproctor/workspaces/services/workspace/internal/lti/domain"
)

const (
	rootKey    = "00000000-0000-4000-8000-000000000001"
	rootSecret = "00000000-0000-4000-8000-000000000002"
)

type fixture struct {
	t    testing.TB
	app  *app.App
	root domain.Caller
}

func newFixture(t testing.TB, opts ...app.Option) *fixture {
	t.Helper()
	return newFixtureOn(t, memstore.New(), opts...)
}

// newFixtureOn is newFixture over repo.
func newFixtureOn(t testing.TB, repo domain.Repository, opts ...app.Option) *fixture {
	t.Helper()
	return newFixtureFull(t, repo, app.Settings{}, opts...)
}

func newFixtureFull(t testing.TB, repo domain.Repository, settings app.Settings, opts ...app.Option) *fixture {
	t.Helper()
	if settings.LTIToolURLs == (ltidomain.ToolURLs{}) {
		settings.LTIToolURLs = ltidomain.NewToolURLs("https://lti.test")
	}
	box, err := secretbox.New(bytes.Repeat([]byte{1}, 32), bytes.Repeat([]byte{2}, 32))
	if err != nil {
		t.Fatal(err)
	}
	a := app.New(repo, box, settings, opts...)
	ctx := context.Background()
	if _, err := a.Bootstrap(ctx, app.BootstrapConfig{
		WorkspaceID: "root", Name: "Root", Products: []string{"pub/math", "pub/ela"},
		AppKey: rootKey, AppSecret: rootSecret,
	}); err != nil {
		t.Fatal(err)
	}
	root, err := a.Authenticate(ctx, rootKey, rootSecret)
	if err != nil {
		t.Fatal(err)
	}
	return &fixture{t: t, app: a, root: root}
}

// create makes a workspace as caller and returns a caller for its server pair.
func (f *fixture) create(caller domain.Caller, in app.CreateInput) (app.CreateResult, domain.Caller) {
	f.t.Helper()
	return apptest.CreateWorkspace(f.t, f.app, caller, in)
}

func TestCreateReturnsUsableKeysAndIsIdempotent(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	in := app.CreateInput{ID: "district-1", Name: "  District One ", Type: "DISTRICT",
		Address: domain.Address{City: "Austin", State: "US-TX", Country: "US"}, Products: []string{"pub/math"}}
	res, err := f.app.CreateWorkspace(ctx, f.root, in)
	if err != nil {
		t.Fatal(err)
	}
	if res.Name != "District One" || res.WorkspaceID != "district-1" || len(res.RegistrationCodes) != 1 {
		t.Errorf("result = %+v", res)
	}
	if res.LTI.ConfigurationURL != "https://lti.test/lti/v1/workspaces/district-1/config.xml" {
		t.Errorf("configurationUrl = %q", res.LTI.ConfigurationURL)
	}
	server, err := f.app.Authenticate(ctx, res.Server.ConsumerKey, res.Server.SharedSecret)
	if err != nil || server.WorkspaceID != "district-1" || !server.RESTAccess {
		t.Errorf("server pair: %+v, %v", server, err)
	}
	lti, err := f.app.Authenticate(ctx, res.LTI.ConsumerKey, res.LTI.SharedSecret)
	if err != nil || lti.RESTAccess {
		t.Errorf("LTI pair: %+v, %v (must authenticate without API access)", lti, err)
	}

	again, err := f.app.CreateWorkspace(ctx, f.root, in)
	if err != nil {
		t.Fatalf("identical retry: %v", err)
	}
	if fmt.Sprint(again) != fmt.Sprint(res) {
		t.Errorf("retry returned %+v, want the original %+v", again, res)
	}
	in.Name = "Another name"
	_, err = f.app.CreateWorkspace(ctx, f.root, in)
	apptest.WantKind(t, err, fault.Conflict)
}

func TestCreateValidatesAndChecksProducts(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	_, err := f.app.CreateWorkspace(ctx, f.root, app.CreateInput{ID: "bad:id", Name: "", Type: "SCHOOL"})
	apptest.WantKind(t, err, fault.Invalid)
	if e, _ := fault.As(err); len(e.Fields) != 3 {
		t.Errorf("violations = %+v, want id, name and type", e.Fields)
	}
	_, err = f.app.CreateWorkspace(ctx, f.root, app.CreateInput{ID: "w", Name: "W", Type: "CAMPUS", Products: []string{"pub/science"}})
	apptest.WantKind(t, err, fault.PermissionDenied)

	_, district := f.create(f.root, app.CreateInput{ID: "d", Products: []string{"pub/math"}})
	_, err = f.app.CreateWorkspace(ctx, district, app.CreateInput{ID: "c", Name: "C", Type: "CAMPUS", Products: []string{"pub/ela"}})
	apptest.WantKind(t, err, fault.PermissionDenied) // root holds pub/ela, the district does not
	f.create(district, app.CreateInput{ID: "c", Type: "CAMPUS", Products: []string{"pub/math"}})
}

func TestTenancyIsTransitiveAndHidesOthers(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	_, a := f.create(f.root, app.CreateInput{ID: "a"})
	_, b := f.create(a, app.CreateInput{ID: "b"})
	f.create(b, app.CreateInput{ID: "c"})
	_, other := f.create(f.root, app.CreateInput{ID: "other"})

	for _, tt := range []struct {
		caller domain.Caller
		id     string
		kind   fault.Kind // Internal means success
	}{
		{a, "c", fault.Internal},     // a manages b, which created c
		{a, "a", fault.Internal},     // its own
		{b, "a", fault.NotFound},     // its manager is not its to see
		{other, "c", fault.NotFound}, // another tenant
		{f.root, "c", fault.Internal},
	} {
		_, err := f.app.GetWorkspace(ctx, tt.caller, tt.id)
		if tt.kind == fault.Internal && err != nil || tt.kind != fault.Internal && fault.KindOf(err) != tt.kind {
			t.Errorf("%s gets %s: %v, want %v", tt.caller.WorkspaceID, tt.id, err, tt.kind)
		}
	}
	name := "renamed"
	_, err := f.app.UpdateWorkspace(ctx, b, app.UpdateInput{ID: "b", Changes: domain.Changes{Name: &name}})
	apptest.WantKind(t, err, fault.PermissionDenied)
	_, err = f.app.DeleteWorkspace(ctx, other, "c", app.Precondition{})
	apptest.WantKind(t, err, fault.NotFound)
	if _, err := f.app.UpdateWorkspace(ctx, a, app.UpdateInput{ID: "c", Changes: domain.Changes{Name: &name}}); err != nil {
		t.Errorf("a updates c: %v", err)
	}
}

func TestUpdateKeepsAbsentFieldsAndRefusesCycles(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	f.create(f.root, app.CreateInput{ID: "p", Address: domain.Address{Country: "US", State: "US-CA"}})
	f.create(f.root, app.CreateInput{ID: "q", ParentID: "p"})

	newName := "Q"
	w, err := f.app.UpdateWorkspace(ctx, f.root, app.UpdateInput{ID: "q", Changes: domain.Changes{Name: &newName}})
	if err != nil || w.Name() != "Q" || w.ParentID() != "p" || w.Type() != domain.TypeDistrict {
		t.Fatalf("update = %+v, %v", w, err)
	}
	parentQ := "q"
	_, err = f.app.UpdateWorkspace(ctx, f.root, app.UpdateInput{ID: "p", Changes: domain.Changes{ParentID: &parentQ}})
	apptest.WantKind(t, err, fault.Invalid) // p -> q -> p
	self := "p"
	_, err = f.app.UpdateWorkspace(ctx, f.root, app.UpdateInput{ID: "p", Changes: domain.Changes{ParentID: &self}})
	apptest.WantKind(t, err, fault.Invalid)

	clear := ""
	w, err = f.app.UpdateWorkspace(ctx, f.root, app.UpdateInput{ID: "q", Changes: domain.Changes{ParentID: &clear}})
	if err != nil || w.ParentID() != "" {
		t.Fatalf("clearing the parent: %+v, %v", w, err)
	}
}

func TestETagGuardsUpdates(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	f.create(f.root, app.CreateInput{ID: "e"})
	w, _ := f.app.GetWorkspace(ctx, f.root, "e")
	read := app.IfRevision(w.Revision())
	name := "first"
	if _, err := f.app.UpdateWorkspace(ctx, f.root, app.UpdateInput{ID: "e", Changes: domain.Changes{Name: &name}, Precondition: read}); err != nil {
		t.Fatal(err)
	}
	name = "second"
	_, err := f.app.UpdateWorkspace(ctx, f.root, app.UpdateInput{ID: "e", Changes: domain.Changes{Name: &name}, Precondition: read})
	apptest.WantKind(t, err, fault.PreconditionFailed)
	// A precondition that names no revision never holds.
	_, err = f.app.UpdateWorkspace(ctx, f.root, app.UpdateInput{ID: "e", Changes: domain.Changes{Name: &name}, Precondition: app.IfRevision()})
	apptest.WantKind(t, err, fault.PreconditionFailed)
}

func TestDeleteStopsKeysAndUndeleteRestores(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	res, w := f.create(f.root, app.CreateInput{ID: "gone"})
	f.create(w, app.CreateInput{ID: "child"})

	deleted, err := f.app.DeleteWorkspace(ctx, f.root, "gone", app.Precondition{})
	if err != nil || !deleted.Deleted() {
		t.Fatalf("delete = %+v, %v", deleted, err)
	}
	_, err = f.app.Authenticate(ctx, res.Server.ConsumerKey, res.Server.SharedSecret)
	apptest.WantKind(t, err, fault.Unauthenticated)
	_, err = f.app.GetWorkspace(ctx, f.root, "gone")
	apptest.WantKind(t, err, fault.NotFound)
	if _, err := f.app.GetWorkspace(ctx, f.root, "child"); err != nil {
		t.Errorf("the deleted workspace's child is no longer visible to root: %v", err)
	}
	_, err = f.app.DeleteWorkspace(ctx, f.root, "gone", app.Precondition{})
	apptest.WantKind(t, err, fault.NotFound)

	if _, err := f.app.UndeleteWorkspace(ctx, f.root, "gone"); err != nil {
		t.Fatal(err)
	}
	if _, err := f.app.Authenticate(ctx, res.Server.ConsumerKey, res.Server.SharedSecret); err != nil {
		t.Errorf("keys after undelete: %v", err)
	}
}

func TestListPagesVisitEveryWorkspaceOnce(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	for i := range 25 {
		name := fmt.Sprintf("School %02d", 24-i)
		if i%2 == 0 {
			name = fmt.Sprintf("school %02d", 24-i)
		}
		f.create(f.root, app.CreateInput{ID: fmt.Sprintf("s%02d", i), Name: name})
	}
	seen := map[string]bool{}
	var last string
	token := ""
	for pages := 0; ; pages++ {
		if pages > 10 {
			t.Fatal("paging does not end")
		}
		res, err := f.app.ListWorkspaces(ctx, f.root, app.ListInput{Search: "SCHOOL", PageSize: ptr(int32(7)), PageToken: token})
		if err != nil {
			t.Fatal(err)
		}
		for _, w := range res.Workspaces {
			if seen[w.ID()] {
				t.Errorf("%s listed twice", w.ID())
			}
			seen[w.ID()] = true
			if key := domain.NameKey(w.Name()); key < last {
				t.Errorf("%q listed after %q", key, last)
			} else {
				last = key
			}
		}
		if token = res.NextPageToken; token == "" {
			break
		}
	}
	if len(seen) != 25 {
		t.Errorf("listed %d workspaces, want 25", len(seen))
	}
	_, err := f.app.ListWorkspaces(ctx, f.root, app.ListInput{Search: "other", PageToken: "garbage"})
	apptest.WantKind(t, err, fault.Invalid)
}

func TestBootstrapIsIdempotentAndGeneratesOnce(t *testing.T) {
	box, _ := secretbox.New(bytes.Repeat([]byte{1}, 32), bytes.Repeat([]byte{2}, 32))
	repo := memstore.New()
	a := app.New(repo, box, app.Settings{}, app.WithClock(func() time.Time { return time.Unix(1e9, 0) }))
	ctx := context.Background()
	cfg := app.BootstrapConfig{WorkspaceID: "root", Name: "Root"}
	first, err := a.Bootstrap(ctx, cfg)
	if err != nil || !first.Created || first.GeneratedKey == "" {
		t.Fatalf("first start = %+v, %v", first, err)
	}
	second, err := a.Bootstrap(ctx, cfg)
	if err != nil || second.Created || second.GeneratedKey != "" {
		t.Fatalf("second start = %+v, %v", second, err)
	}
	cfg.AppKey, cfg.AppSecret = rootKey, rootSecret
	if _, err := a.Bootstrap(ctx, cfg); err != nil {
		t.Fatal(err)
	}
	for _, pair := range [][2]string{{first.GeneratedKey, first.GeneratedSecret}, {rootKey, rootSecret}} {
		if c, err := a.Authenticate(ctx, pair[0], pair[1]); err != nil || c.WorkspaceID != "root" {
			t.Errorf("root pair %s: %+v, %v", pair[0], c, err)
		}
	}
	cfg.AppSecret = "00000000-0000-4000-8000-00000000000f"
	if _, err := a.Bootstrap(ctx, cfg); err == nil {
		t.Error("a configured app key with a different secret was accepted silently")
	}
}

// A configured root key reserved but not on the root: a start that stopped
// between the two writes is finished; a revoked key, or another
// workspace's, is refused.
func TestBootstrapFinishesAnUnfinishedKeyButNeverRevivesARevokedOne(t *testing.T) {
	box, _ := secretbox.New(bytes.Repeat([]byte{1}, 32), bytes.Repeat([]byte{2}, 32))
	repo := memstore.New()
	a := app.New(repo, box, app.Settings{}, app.WithClock(func() time.Time { return time.Unix(1e9, 0) }))
	ctx := context.Background()
	cfg := app.BootstrapConfig{WorkspaceID: "root", Name: "Root"}
	first, err := a.Bootstrap(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}

	// Reserved for the root by a start that stopped there.
	if err := repo.ReserveAppKey(ctx, "root", rootKey); err != nil {
		t.Fatal(err)
	}
	cfg.AppKey, cfg.AppSecret = rootKey, rootSecret
	if _, err := a.Bootstrap(ctx, cfg); err != nil {
		t.Fatalf("finishing an unfinished root key: %v", err)
	}
	if c, err := a.Authenticate(ctx, rootKey, rootSecret); err != nil || c.WorkspaceID != "root" {
		t.Fatalf("the finished root key: %+v, %v", c, err)
	}

	// Revoked: the configured key must not come back.
	generated := domain.Caller{WorkspaceID: "root", AppKey: first.GeneratedKey}
	if _, err := a.RevokeWorkspaceKey(ctx, generated, "root", rootKey); err != nil {
		t.Fatal(err)
	}
	_, err = a.Bootstrap(ctx, cfg)
	apptest.WantKind(t, err, fault.Invalid)
	if _, err := a.Authenticate(ctx, rootKey, rootSecret); !errors.Is(err, app.ErrBadCredentials) {
		t.Fatalf("a revoked root key authenticates after a start: %v", err)
	}

	// Another workspace's key.
	other := "00000000-0000-4000-8000-0000000000aa"
	if err := repo.ReserveAppKey(ctx, "someone-else", other); err != nil {
		t.Fatal(err)
	}
	cfg.AppKey = other
	_, err = a.Bootstrap(ctx, cfg)
	apptest.WantKind(t, err, fault.Invalid)
}

func TestAuthenticateRefusesWrongSecret(t *testing.T) {
	f := newFixture(t)
	_, err := f.app.Authenticate(context.Background(), rootKey, "wrong")
	if !errors.Is(err, app.ErrBadCredentials) {
		t.Errorf("err = %v", err)
	}
	_, err = f.app.Authenticate(context.Background(), "unknown", rootSecret)
	if !errors.Is(err, app.ErrBadCredentials) {
		t.Errorf("err = %v", err)
	}
}

// revocations records what the application asked the auth service to revoke.
type revocations struct{ ids []string }

func (r *revocations) RevokeWorkspaceTokens(id, _ string) { r.ids = append(r.ids, id) }

func TestDeleteRevokesTokensAndStatusRemembersIt(t *testing.T) {
	revoked := &revocations{}
	f := newFixture(t, app.WithTokenRevoker(revoked))
	ctx := context.Background()
	f.create(f.root, app.CreateInput{ID: "d1"})

	st, err := f.app.GetWorkspaceStatus(ctx, f.root, "d1")
	if err != nil || st.Deleted() || !st.TokenCutoff().IsZero() {
		t.Fatalf("status before delete: %+v, %v", st, err)
	}
	if _, err := f.app.DeleteWorkspace(ctx, f.root, "d1", app.Precondition{}); err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(revoked.ids) != "[d1]" {
		t.Fatalf("revoked %v, want [d1]", revoked.ids)
	}
	st, err = f.app.GetWorkspaceStatus(ctx, f.root, "d1")
	if err != nil || !st.Deleted() || st.TokenCutoff().IsZero() {
		t.Fatalf("status after delete: %+v, %v", st, err)
	}
	deletedAt := st.TokenCutoff()
	if _, err := f.app.UndeleteWorkspace(ctx, f.root, "d1"); err != nil {
		t.Fatal(err)
	}
	st, err = f.app.GetWorkspaceStatus(ctx, f.root, "d1")
	if err != nil || st.Deleted() || st.TokenCutoff().Before(deletedAt) {
		t.Fatalf("status after undelete: %+v, %v; want active, token cutoff not before %v", st, err, deletedAt)
	}
	if fmt.Sprint(revoked.ids) != "[d1]" {
		t.Fatalf("undelete revoked again: %v", revoked.ids)
	}

	// Status follows visibility like a get.
	_, other := f.create(f.root, app.CreateInput{ID: "other"})
	_, err = f.app.GetWorkspaceStatus(ctx, other, "d1")
	apptest.WantKind(t, err, fault.NotFound)
}

func ptr[T any](v T) *T { return &v }
