// Package repotest is the contract every domain.Repository implementation
// passes. Each adapter's tests call Run with a constructor that returns an
// empty repository; the same cases then hold for the in-memory store and for
// MongoDB (FerretDB in tests), so the application can rely on them.
package repotest

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/liveproctor/workspaces/services/workspace/internal/domain"
)

// NewRepository returns an empty repository for one test.
type NewRepository func(t *testing.T) domain.Repository

// Run runs the contract against repositories made by newRepo.
func Run(t *testing.T, newRepo NewRepository) {
	cases := []struct {
		name string
		run  func(*testing.T, domain.Repository)
	}{
		{"CreateThenGetRoundTrips", createThenGetRoundTrips},
		{"GetUnknownIsNotFound", getUnknownIsNotFound},
		{"CreateRefusesTakenID", createRefusesTakenID},
		{"CreateRefusesTakenAppKey", createRefusesTakenAppKey},
		{"CreateRefusesTakenCode", createRefusesTakenCode},
		{"FailedCreateLeavesNothingUsable", failedCreateLeavesNothingUsable},
		{"GetByAppKey", getByAppKey},
		{"UpdateChecksRevision", updateChecksRevision},
		{"UpdateKeepsImmutableFields", updateKeepsImmutableFields},
		{"UpdateUnknownIsNotFound", updateUnknownIsNotFound},
		{"AddKey", addKey},
		{"ListVisibilityAndOrder", listVisibilityAndOrder},
		{"ListFilters", listFilters},
		{"ListPagesWithoutGapsOrRepeats", listPagesWithoutGapsOrRepeats},
		{"ListLeavesOutDeleted", listLeavesOutDeleted},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) { c.run(t, newRepo(t)) })
	}
}

var (
	t0 = time.Date(2026, 11, 22, 7, 46, 0, 0, time.UTC)
	t1 = t0.Add(time.Hour)
)

// sample returns a workspace created by "root", with one key pair and one
// registration code whose values derive from id.
func sample(id string) *domain.Workspace {
	return &domain.Workspace{
		ID:       id,
		Name:     "Workspace " + id,
		Type:     domain.TypeDistrict,
		Address:  domain.Address{City: "Austin", State: "US-TX", Country: "US"},
		Products: []string{"pub/math"},
		Tags:     []domain.Tag{{Key: "origin", Type: "string", Value: "test"}},

		CreatedBy: "root",
		Managers:  []string{"root"},
		Keys: []domain.KeyPair{{
			AppKey:       "key-" + id,
			SealedSecret: []byte("sealed-" + id),
			SecretDigest: []byte("digest-" + id),
			Role:         domain.RoleServer,
			Tags:         []domain.Tag{domain.RESTAccessTag},
			CreatedAt:    t0,
			UpdatedAt:    t0,
		}},
		RegistrationCodes: []string{"code-" + id},
		CreateFingerprint: "fp-" + id,
		CreatedAt:         t0,
		UpdatedAt:         t0,
	}
}

func mustCreate(t *testing.T, r domain.Repository, w *domain.Workspace) {
	t.Helper()
	if err := r.Create(context.Background(), w); err != nil {
		t.Fatalf("Create(%s): %v", w.ID, err)
	}
}

func mustGet(t *testing.T, r domain.Repository, id string) *domain.Workspace {
	t.Helper()
	w, err := r.Get(context.Background(), id)
	if err != nil {
		t.Fatalf("Get(%s): %v", id, err)
	}
	return w
}

func wantErr(t *testing.T, op string, err, want error) {
	t.Helper()
	if !errors.Is(err, want) {
		t.Fatalf("%s: error = %v, want %v", op, err, want)
	}
}

func createThenGetRoundTrips(t *testing.T, r domain.Repository) {
	w := sample("a")
	w.ParentID = "root"
	w.ObjectiveDocuments = []string{"TEKS#2017#MATH:2024"}
	w.SupportToolID = "tool-1"
	mustCreate(t, r, w)
	if w.Revision != 1 {
		t.Errorf("Revision after Create = %d, want 1", w.Revision)
	}
	got := mustGet(t, r, "a")
	want := sample("a")
	want.ParentID = "root"
	want.ObjectiveDocuments = []string{"TEKS#2017#MATH:2024"}
	want.SupportToolID = "tool-1"
	want.Revision = 1
	if diff := compare(got, want); diff != "" {
		t.Fatalf("stored workspace differs: %s", diff)
	}
}

func getUnknownIsNotFound(t *testing.T, r domain.Repository) {
	_, err := r.Get(context.Background(), "nope")
	wantErr(t, "Get", err, domain.ErrNotFound)
	_, err = r.GetByAppKey(context.Background(), "nope")
	wantErr(t, "GetByAppKey", err, domain.ErrNotFound)
}

func createRefusesTakenID(t *testing.T, r domain.Repository) {
	mustCreate(t, r, sample("a"))
	again := sample("b")
	again.ID = "a"
	wantErr(t, "Create", r.Create(context.Background(), again), domain.ErrIDTaken)
	// The refused create's own key and code stay free.
	fresh := sample("b")
	mustCreate(t, r, fresh)
}

func createRefusesTakenAppKey(t *testing.T, r domain.Repository) {
	mustCreate(t, r, sample("a"))
	b := sample("b")
	b.Keys = append(b.Keys, sample("a").Keys[0])
	wantErr(t, "Create", r.Create(context.Background(), b), domain.ErrAppKeyTaken)
	_, err := r.Get(context.Background(), "b")
	wantErr(t, "Get after refused create", err, domain.ErrNotFound)
}

func createRefusesTakenCode(t *testing.T, r domain.Repository) {
	mustCreate(t, r, sample("a"))
	b := sample("b")
	b.RegistrationCodes = []string{"code-b", "code-a"}
	wantErr(t, "Create", r.Create(context.Background(), b), domain.ErrCodeTaken)
	_, err := r.Get(context.Background(), "b")
	wantErr(t, "Get after refused create", err, domain.ErrNotFound)
}

// failedCreateLeavesNothingUsable: a create refused part-way must not leave
// its new app key pointing anywhere, and must not hold on to what it
// reserved, so the retry (with the same key) succeeds.
func failedCreateLeavesNothingUsable(t *testing.T, r domain.Repository) {
	mustCreate(t, r, sample("a"))
	b := sample("b")
	b.RegistrationCodes = []string{"code-a"}
	wantErr(t, "Create", r.Create(context.Background(), b), domain.ErrCodeTaken)
	_, err := r.GetByAppKey(context.Background(), "key-b")
	wantErr(t, "GetByAppKey of a refused create's key", err, domain.ErrNotFound)

	mustCreate(t, r, sample("b"))
	got, err := r.GetByAppKey(context.Background(), "key-b")
	if err != nil || got.ID != "b" {
		t.Fatalf("GetByAppKey(key-b) = %v, %v; want workspace b", got, err)
	}
}

func getByAppKey(t *testing.T, r domain.Repository) {
	mustCreate(t, r, sample("a"))
	mustCreate(t, r, sample("b"))
	got, err := r.GetByAppKey(context.Background(), "key-b")
	if err != nil {
		t.Fatal(err)
	}
	if got.ID != "b" {
		t.Fatalf("GetByAppKey(key-b) = workspace %s, want b", got.ID)
	}
	// A deleted workspace is still found: deciding what that means is the
	// application's job.
	got.DeletedAt = t1
	if err := r.Update(context.Background(), got); err != nil {
		t.Fatal(err)
	}
	got, err = r.GetByAppKey(context.Background(), "key-b")
	if err != nil || !got.Deleted() {
		t.Fatalf("GetByAppKey of deleted = %v, %v; want the deleted workspace", got, err)
	}
}

func updateChecksRevision(t *testing.T, r domain.Repository) {
	mustCreate(t, r, sample("a"))
	first := mustGet(t, r, "a")
	second := mustGet(t, r, "a")

	first.Name = "Renamed"
	first.UpdatedAt = t1
	if err := r.Update(context.Background(), first); err != nil {
		t.Fatal(err)
	}
	if first.Revision != 2 {
		t.Errorf("Revision after Update = %d, want 2", first.Revision)
	}
	second.Name = "Lost update"
	wantErr(t, "stale Update", r.Update(context.Background(), second), domain.ErrRevisionChanged)

	got := mustGet(t, r, "a")
	if got.Name != "Renamed" || got.Revision != 2 || !got.UpdatedAt.Equal(t1) {
		t.Fatalf("after update: name %q revision %d updated %v", got.Name, got.Revision, got.UpdatedAt)
	}
}

func updateKeepsImmutableFields(t *testing.T, r domain.Repository) {
	mustCreate(t, r, sample("a"))
	w := mustGet(t, r, "a")
	w.Name = "New name"
	w.Type = domain.TypeCampus
	w.ParentID = "root"
	w.Address = domain.Address{City: "Lyon", State: "FR-ARA", Country: "FR"}
	w.Products = []string{"pub/ela", "pub/math"}
	w.ObjectiveDocuments = []string{"CCSS#2010#ELA:2020"}
	w.UpdatedAt = t1
	w.DeletedAt = t1
	w.TokenCutoff = t1
	// Not the update's to change:
	w.Managers = []string{"someone-else"}
	w.CreatedAt = t1
	w.Keys = nil
	w.RegistrationCodes = nil
	if err := r.Update(context.Background(), w); err != nil {
		t.Fatal(err)
	}
	want := sample("a")
	want.Name = "New name"
	want.Type = domain.TypeCampus
	want.ParentID = "root"
	want.Address = domain.Address{City: "Lyon", State: "FR-ARA", Country: "FR"}
	want.Products = []string{"pub/ela", "pub/math"}
	want.ObjectiveDocuments = []string{"CCSS#2010#ELA:2020"}
	want.UpdatedAt = t1
	want.DeletedAt = t1
	want.TokenCutoff = t1
	want.Revision = 2
	if diff := compare(mustGet(t, r, "a"), want); diff != "" {
		t.Fatalf("after update: %s", diff)
	}
	// Clearing works too.
	w = mustGet(t, r, "a")
	w.ParentID, w.Products, w.DeletedAt = "", nil, time.Time{}
	if err := r.Update(context.Background(), w); err != nil {
		t.Fatal(err)
	}
	got := mustGet(t, r, "a")
	if got.ParentID != "" || len(got.Products) != 0 || got.Deleted() {
		t.Fatalf("after clearing: parent %q products %v deleted %v", got.ParentID, got.Products, got.DeletedAt)
	}
}

func updateUnknownIsNotFound(t *testing.T, r domain.Repository) {
	w := sample("ghost")
	w.Revision = 1
	err := r.Update(context.Background(), w)
	if !errors.Is(err, domain.ErrNotFound) && !errors.Is(err, domain.ErrRevisionChanged) {
		t.Fatalf("Update of unknown workspace: error = %v, want not found or revision changed", err)
	}
}

func addKey(t *testing.T, r domain.Repository) {
	mustCreate(t, r, sample("a"))
	mustCreate(t, r, sample("b"))
	k := domain.KeyPair{
		AppKey: "extra", SealedSecret: []byte("s"), SecretDigest: []byte("d"),
		Role: domain.RoleBootstrap, Tags: []domain.Tag{domain.RESTAccessTag}, CreatedAt: t1, UpdatedAt: t1,
	}
	if err := r.AddKey(context.Background(), "a", k); err != nil {
		t.Fatal(err)
	}
	got, err := r.GetByAppKey(context.Background(), "extra")
	if err != nil || got.ID != "a" {
		t.Fatalf("GetByAppKey(extra) = %v, %v; want a", got, err)
	}
	if stored, ok := got.KeyByAppKey("extra"); !ok || stored.Role != domain.RoleBootstrap || !stored.CreatedAt.Equal(t1) {
		t.Fatalf("added key as stored: %+v (found %v)", stored, ok)
	}
	wantErr(t, "AddKey of a taken key", r.AddKey(context.Background(), "b", k), domain.ErrAppKeyTaken)
	k.AppKey = "orphan"
	wantErr(t, "AddKey to unknown workspace", r.AddKey(context.Background(), "ghost", k), domain.ErrNotFound)
}

func ids(ws []*domain.Workspace) []string {
	out := make([]string, len(ws))
	for i, w := range ws {
		out[i] = w.ID
	}
	return out
}

func list(t *testing.T, r domain.Repository, q domain.ListQuery) []string {
	t.Helper()
	if q.Limit == 0 {
		q.Limit = 1000
	}
	ws, err := r.List(context.Background(), q)
	if err != nil {
		t.Fatalf("List(%+v): %v", q, err)
	}
	return ids(ws)
}

func wantIDs(t *testing.T, what string, got, want []string) {
	t.Helper()
	if !slices.Equal(got, want) {
		t.Fatalf("%s = %v, want %v", what, got, want)
	}
}

// tree: root creates district (d), d creates campus c1; root creates other
// (o). Names are chosen so the case-insensitive order differs from bytes.
func tree(t *testing.T, r domain.Repository) {
	root := sample("root")
	root.Name, root.CreatedBy, root.Managers = "Root", "", nil
	mustCreate(t, r, root)
	d := sample("d")
	d.Name = "beta District"
	mustCreate(t, r, d)
	c1 := sample("c1")
	c1.Name, c1.Type, c1.CreatedBy, c1.Managers = "Alpha Campus", domain.TypeCampus, "d", []string{"d", "root"}
	c1.Address.State = "US-CA"
	mustCreate(t, r, c1)
	o := sample("o")
	o.Name = "Beta district"
	o.Address.State = "US-NY"
	mustCreate(t, r, o)
}

func listVisibilityAndOrder(t *testing.T, r domain.Repository) {
	tree(t, r)
	// "Beta district"/o and "beta District"/d share a name key: id decides.
	wantIDs(t, "root's list", list(t, r, domain.ListQuery{VisibleTo: "root"}), []string{"c1", "d", "o", "root"})
	wantIDs(t, "d's list", list(t, r, domain.ListQuery{VisibleTo: "d"}), []string{"c1", "d"})
	wantIDs(t, "c1's list", list(t, r, domain.ListQuery{VisibleTo: "c1"}), []string{"c1"})
	wantIDs(t, "stranger's list", list(t, r, domain.ListQuery{VisibleTo: "stranger"}), []string{})
}

func listFilters(t *testing.T, r domain.Repository) {
	tree(t, r)
	wantIDs(t, "search district", list(t, r, domain.ListQuery{VisibleTo: "root", NameContains: "district"}), []string{"d", "o"})
	wantIDs(t, "search is literal", list(t, r, domain.ListQuery{VisibleTo: "root", NameContains: "a.c"}), []string{})
	wantIDs(t, "search pha c", list(t, r, domain.ListQuery{VisibleTo: "root", NameContains: "pha c"}), []string{"c1"})
	wantIDs(t, "states", list(t, r, domain.ListQuery{VisibleTo: "root", States: []string{"US-CA", "US-NY"}}), []string{"c1", "o"})
	wantIDs(t, "states and search", list(t, r, domain.ListQuery{VisibleTo: "root", States: []string{"US-TX"}, NameContains: "o"}), []string{"root"})
	wantIDs(t, "limit", list(t, r, domain.ListQuery{VisibleTo: "root", Limit: 2}), []string{"c1", "d"})
}

func listPagesWithoutGapsOrRepeats(t *testing.T, r domain.Repository) {
	root := sample("root")
	root.CreatedBy, root.Managers = "", nil
	mustCreate(t, r, root)
	var want []string
	for i := range 23 {
		w := sample(fmt.Sprintf("w%02d", i))
		w.Name = []string{"Same", "same", "Other"}[i%3]
		mustCreate(t, r, w)
	}
	want = list(t, r, domain.ListQuery{VisibleTo: "root"})
	if len(want) != 24 {
		t.Fatalf("full list has %d workspaces, want 24", len(want))
	}
	var got []string
	var after *domain.ListPosition
	for range 100 {
		page, err := r.List(context.Background(), domain.ListQuery{VisibleTo: "root", After: after, Limit: 5})
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, ids(page)...)
		if len(page) < 5 {
			break
		}
		last := page[len(page)-1]
		after = &domain.ListPosition{NameKey: domain.NameKey(last.Name), ID: last.ID}
	}
	wantIDs(t, "pages joined", got, want)
}

func listLeavesOutDeleted(t *testing.T, r domain.Repository) {
	tree(t, r)
	d := mustGet(t, r, "d")
	d.DeletedAt = t1
	if err := r.Update(context.Background(), d); err != nil {
		t.Fatal(err)
	}
	// d's child stays, still managed by root.
	wantIDs(t, "root's list", list(t, r, domain.ListQuery{VisibleTo: "root"}), []string{"c1", "o", "root"})
}

// compare returns a description of the first difference between two
// workspaces, or "" when they are equal. Times compare as instants at
// millisecond precision, which is what stores keep.
func compare(got, want *domain.Workspace) string {
	g, w := normalize(got), normalize(want)
	checks := []struct {
		field    string
		got, wnt any
	}{
		{"ID", g.ID, w.ID}, {"Name", g.Name, w.Name}, {"Type", g.Type, w.Type},
		{"ParentID", g.ParentID, w.ParentID}, {"Address", g.Address, w.Address},
		{"Products", g.Products, w.Products}, {"ObjectiveDocuments", g.ObjectiveDocuments, w.ObjectiveDocuments},
		{"Tags", g.Tags, w.Tags}, {"SupportToolID", g.SupportToolID, w.SupportToolID},
		{"CreatedBy", g.CreatedBy, w.CreatedBy}, {"Managers", g.Managers, w.Managers},
		{"Keys", g.Keys, w.Keys}, {"RegistrationCodes", g.RegistrationCodes, w.RegistrationCodes},
		{"CreateFingerprint", g.CreateFingerprint, w.CreateFingerprint},
		{"CreatedAt", g.CreatedAt, w.CreatedAt}, {"UpdatedAt", g.UpdatedAt, w.UpdatedAt},
		{"DeletedAt", g.DeletedAt, w.DeletedAt}, {"TokenCutoff", g.TokenCutoff, w.TokenCutoff},
		{"Revision", g.Revision, w.Revision},
	}
	for _, c := range checks {
		if fmt.Sprintf("%#v", c.got) != fmt.Sprintf("%#v", c.wnt) {
			return fmt.Sprintf("%s = %#v, want %#v", c.field, c.got, c.wnt)
		}
	}
	return ""
}

// normalize makes empty slices nil and times UTC milliseconds, so stores
// that cannot tell nil from empty, or keep less precision, compare equal.
func normalize(w *domain.Workspace) domain.Workspace {
	c := *w
	nilIfEmpty := func(s []string) []string {
		if len(s) == 0 {
			return nil
		}
		return s
	}
	c.Products = nilIfEmpty(c.Products)
	c.ObjectiveDocuments = nilIfEmpty(c.ObjectiveDocuments)
	c.Managers = nilIfEmpty(c.Managers)
	c.RegistrationCodes = nilIfEmpty(c.RegistrationCodes)
	if len(c.Tags) == 0 {
		c.Tags = nil
	}
	ms := func(t time.Time) time.Time {
		if t.IsZero() {
			return time.Time{}
		}
		return t.UTC().Truncate(time.Millisecond)
	}
	c.CreatedAt, c.UpdatedAt, c.DeletedAt, c.TokenCutoff = ms(c.CreatedAt), ms(c.UpdatedAt), ms(c.DeletedAt), ms(c.TokenCutoff)
	keys := make([]domain.KeyPair, len(c.Keys))
	for i, k := range c.Keys {
		k.CreatedAt, k.UpdatedAt = ms(k.CreatedAt), ms(k.UpdatedAt)
		if len(k.Tags) == 0 {
			k.Tags = nil
		}
		keys[i] = k
	}
	c.Keys = keys
	if len(c.Keys) == 0 {
		c.Keys = nil
	}
	return c
}
