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
	ltidomain "github.com/liveproctor/workspaces/services/workspace/internal/lti/domain"
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
		{"KeysChangeThroughUpdate", keysChangeThroughUpdate},
		{"ReserveAppKeyIsForGood", reserveAppKeyIsForGood},
		{"KeyUses", keyUses},
		{"WithExpiredKeys", withExpiredKeys},
		{"ListVisibilityAndOrder", listVisibilityAndOrder},
		{"ListFilters", listFilters},
		{"ListPagesWithoutGapsOrRepeats", listPagesWithoutGapsOrRepeats},
		{"ListLeavesOutDeleted", listLeavesOutDeleted},
		{"ListAgreesWithSelects", listAgreesWithSelects},
		{"GetMany", getMany},
		{"ConcurrentUpdatesHaveOneWinner", concurrentUpdatesHaveOneWinner},
		{"ConcurrentKeyChangesLoseNoPair", concurrentKeyChangesLoseNoPair},
		{"LTIRegistrationsChangeThroughUpdate", ltiRegistrationsChangeThroughUpdate},
		{"LTIReservationIsStoreWide", ltiReservationIsStoreWide},
		{"ConcurrentLTIReservationsHaveOneWinner", concurrentLTIReservationsHaveOneWinner},
		{"WorkspacesWithLTIIssuer", workspacesWithLTIIssuer},
		{"WebhooksChangeThroughUpdate", webhooksChangeThroughUpdate},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) { c.run(t, newRepo(t)) })
	}
}

var (
	t0 = time.Date(2026, 11, 22, 7, 46, 0, 0, time.UTC)
	t1 = t0.Add(time.Hour)
)

// sample returns a workspace created by "root", as a store keeps it, with
// one key pair and one registration code whose values derive from id.
func sample(id string) domain.StoredWorkspace {
	return domain.StoredWorkspace{
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

// workspace is the workspace s describes.
func workspace(s domain.StoredWorkspace) *domain.Workspace {
	return domain.UnmarshalWorkspaceFromDatabase(s)
}

func mustCreate(t *testing.T, r domain.Repository, s domain.StoredWorkspace) {
	t.Helper()
	if err := r.Create(context.Background(), workspace(s)); err != nil {
		t.Fatalf("Create(%s): %v", s.ID, err)
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

func mustUpdate(t *testing.T, r domain.Repository, w *domain.Workspace) *domain.Workspace {
	t.Helper()
	updated, err := r.Update(context.Background(), w)
	if err != nil {
		t.Fatalf("Update(%s): %v", w.ID(), err)
	}
	return updated
}

func wantErr(t *testing.T, op string, err, want error) {
	t.Helper()
	if !errors.Is(err, want) {
		t.Fatalf("%s: error = %v, want %v", op, err, want)
	}
}

func createThenGetRoundTrips(t *testing.T, r domain.Repository) {
	s := sample("a")
	s.ParentID = "root"
	s.ObjectiveDocuments = []string{"TEKS#2017#MATH:2024"}
	s.RateLimit = &domain.RateLimit{PerSecond: 5, Burst: 7}
	s.SupportToolID = "tool-1"
	mustCreate(t, r, s)
	got := mustGet(t, r, "a")
	want := sample("a")
	want.ParentID = "root"
	want.ObjectiveDocuments = []string{"TEKS#2017#MATH:2024"}
	want.RateLimit = &domain.RateLimit{PerSecond: 5, Burst: 7}
	want.SupportToolID = "tool-1"
	want.Revision = 1
	if diff := compare(got, workspace(want)); diff != "" {
		t.Fatalf("stored workspace differs: %s", diff)
	}
}

func getUnknownIsNotFound(t *testing.T, r domain.Repository) {
	_, err := r.Get(context.Background(), "nope")
	wantErr(t, "Get", err, domain.ErrNotFound)
	_, err = r.GetByAppKey(context.Background(), "nope")
	wantErr(t, "GetByAppKey", err, domain.ErrNotFound)
}

func getMany(t *testing.T, r domain.Repository) {
	mustCreate(t, r, sample("a"))
	mustCreate(t, r, sample("b"))
	got, err := r.GetMany(context.Background(), "b", "nope", "a", "b")
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got["a"] == nil || got["b"] == nil {
		t.Fatalf("GetMany(b, nope, a, b) = %v; want a and b", got)
	}
	if diff := compare(got["b"], mustGet(t, r, "b")); diff != "" {
		t.Fatalf("GetMany's b differs from Get's: %s", diff)
	}
}

func createRefusesTakenID(t *testing.T, r domain.Repository) {
	mustCreate(t, r, sample("a"))
	again := sample("b")
	again.ID = "a"
	wantErr(t, "Create", r.Create(context.Background(), workspace(again)), domain.ErrIDTaken)
	// The refused create's own key and code stay free.
	mustCreate(t, r, sample("b"))
}

func createRefusesTakenAppKey(t *testing.T, r domain.Repository) {
	mustCreate(t, r, sample("a"))
	b := sample("b")
	b.Keys = append(b.Keys, sample("a").Keys[0])
	wantErr(t, "Create", r.Create(context.Background(), workspace(b)), domain.ErrAppKeyTaken)
	_, err := r.Get(context.Background(), "b")
	wantErr(t, "Get after refused create", err, domain.ErrNotFound)
}

func createRefusesTakenCode(t *testing.T, r domain.Repository) {
	mustCreate(t, r, sample("a"))
	b := sample("b")
	b.RegistrationCodes = []string{"code-b", "code-a"}
	wantErr(t, "Create", r.Create(context.Background(), workspace(b)), domain.ErrCodeTaken)
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
	wantErr(t, "Create", r.Create(context.Background(), workspace(b)), domain.ErrCodeTaken)
	_, err := r.GetByAppKey(context.Background(), "key-b")
	wantErr(t, "GetByAppKey of a refused create's key", err, domain.ErrNotFound)

	mustCreate(t, r, sample("b"))
	got, err := r.GetByAppKey(context.Background(), "key-b")
	if err != nil || got.ID() != "b" {
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
	if got.ID() != "b" {
		t.Fatalf("GetByAppKey(key-b) = workspace %s, want b", got.ID())
	}
	// A deleted workspace is still found: deciding what that means is the
	// application's job.
	if err := got.Delete(t1); err != nil {
		t.Fatal(err)
	}
	mustUpdate(t, r, got)
	got, err = r.GetByAppKey(context.Background(), "key-b")
	if err != nil || !got.Deleted() {
		t.Fatalf("GetByAppKey of deleted = %v, %v; want the deleted workspace", got, err)
	}
}

func updateChecksRevision(t *testing.T, r domain.Repository) {
	mustCreate(t, r, sample("a"))
	first := mustGet(t, r, "a")
	second := mustGet(t, r, "a")

	renamed, lost := "Renamed", "Lost update"
	if err := first.Update(domain.Changes{Name: &renamed}, t1); err != nil {
		t.Fatal(err)
	}
	updated := mustUpdate(t, r, first)
	if updated.Revision() != 2 {
		t.Errorf("Revision after Update = %d, want 2", updated.Revision())
	}
	if err := second.Update(domain.Changes{Name: &lost}, t1); err != nil {
		t.Fatal(err)
	}
	_, err := r.Update(context.Background(), second)
	wantErr(t, "stale Update", err, domain.ErrRevisionChanged)

	got := mustGet(t, r, "a")
	if got.Name() != "Renamed" || got.Revision() != 2 || !got.UpdatedAt().Equal(t1) {
		t.Fatalf("after update: name %q revision %d updated %v", got.Name(), got.Revision(), got.UpdatedAt())
	}
	if diff := compare(updated, got); diff != "" {
		t.Fatalf("Update returned another workspace than is stored: %s", diff)
	}
}

func updateKeepsImmutableFields(t *testing.T, r domain.Repository) {
	mustCreate(t, r, sample("a"))
	changed := func() domain.StoredWorkspace {
		s := sample("a")
		s.Name = "New name"
		s.Type = domain.TypeCampus
		s.ParentID = "root"
		s.Address = domain.Address{City: "Lyon", State: "FR-ARA", Country: "FR"}
		s.Products = []string{"pub/ela", "pub/math"}
		s.ObjectiveDocuments = []string{"CCSS#2010#ELA:2020"}
		s.RateLimit = &domain.RateLimit{PerSecond: 50, Burst: 60}
		s.UpdatedAt = t1
		s.DeletedAt = t1
		s.TokenCutoff = t1
		return s
	}
	s := changed()
	s.Revision = 1
	// Not the update's to change:
	s.Managers = []string{"someone-else"}
	s.CreatedAt = t1
	s.RegistrationCodes = nil
	mustUpdate(t, r, workspace(s))
	want := changed()
	want.Revision = 2
	if diff := compare(mustGet(t, r, "a"), workspace(want)); diff != "" {
		t.Fatalf("after update: %s", diff)
	}
	// Clearing works too.
	w := mustGet(t, r, "a")
	w.Undelete(t1)
	none, noParent := []string{}, ""
	if err := w.Update(domain.Changes{ParentID: &noParent, Products: &none, RemoveRateLimit: true}, t1); err != nil {
		t.Fatal(err)
	}
	mustUpdate(t, r, w)
	got := mustGet(t, r, "a")
	if _, own := got.RateLimit(); own {
		t.Fatal("the rate limit was not removed")
	}
	if got.ParentID() != "" || len(got.Products()) != 0 || got.Deleted() {
		t.Fatalf("after clearing: parent %q products %v deleted %v", got.ParentID(), got.Products(), got.DeletedAt())
	}
}

func updateUnknownIsNotFound(t *testing.T, r domain.Repository) {
	s := sample("ghost")
	s.Revision = 1
	_, err := r.Update(context.Background(), workspace(s))
	if !errors.Is(err, domain.ErrNotFound) && !errors.Is(err, domain.ErrRevisionChanged) {
		t.Fatalf("Update of unknown workspace: error = %v, want not found or revision changed", err)
	}
}

// keysChangeThroughUpdate: a new pair is reserved, then listed by a
// revision-checked Update; a stale Update cannot drop it; a pair removed by
// Update no longer finds its workspace, though its reservation stays.
func keysChangeThroughUpdate(t *testing.T, r domain.Repository) {
	ctx := context.Background()
	mustCreate(t, r, sample("a"))
	w := mustGet(t, r, "a")
	stale := mustGet(t, r, "a")
	if err := r.ReserveAppKey(ctx, "a", "extra"); err != nil {
		t.Fatal(err)
	}
	sealed := domain.SealedKey{AppKey: "extra", SealedSecret: []byte("s"), SecretDigest: []byte("d")}
	if _, err := w.CreateKey(domain.NewKey{Name: "ci", Tags: []domain.Tag{domain.RESTAccessTag}}, sealed, t1); err != nil {
		t.Fatal(err)
	}
	old, _, err := w.RotateKey("key-a", domain.SealedKey{AppKey: "next", SealedSecret: []byte("s2"), SecretDigest: []byte("d2")}, time.Hour, t1)
	if err != nil {
		t.Fatal(err)
	}
	if err := r.ReserveAppKey(ctx, "a", "next"); err != nil {
		t.Fatal(err)
	}
	wantKeys := keys(w.Keys())
	stored := mustUpdate(t, r, w)
	got, err := r.GetByAppKey(ctx, "extra")
	if err != nil || got.ID() != "a" {
		t.Fatalf("GetByAppKey(extra) = %v, %v; want a", got, err)
	}
	if diff := compare(got, stored); diff != "" {
		t.Fatalf("Update returned another workspace than is stored: %s", diff)
	}
	if gotKeys := fmt.Sprintf("%#v", keys(got.Keys())); gotKeys != fmt.Sprintf("%#v", wantKeys) {
		t.Fatalf("key pairs as stored: %s", gotKeys)
	}
	if k, _ := got.KeyByAppKey("key-a"); !k.ExpiresAt.Equal(old.ExpiresAt) || k.Name != "server" {
		t.Fatalf("rotated pair as stored: expires %v name %q", k.ExpiresAt, k.Name)
	}
	if k, _ := got.KeyByAppKey("next"); k.Name != "server" || !k.ExpiresAt.IsZero() {
		t.Fatalf("successor as stored: expires %v name %q", k.ExpiresAt, k.Name)
	}

	// A writer that read before the change cannot write over it.
	renamed := "Renamed"
	if err := stale.Update(domain.Changes{Name: &renamed}, t1); err != nil {
		t.Fatal(err)
	}
	_, err = r.Update(ctx, stale)
	wantErr(t, "stale Update", err, domain.ErrRevisionChanged)

	if _, err := got.RevokeKey("extra", t1); err != nil {
		t.Fatal(err)
	}
	mustUpdate(t, r, got)
	_, err = r.GetByAppKey(ctx, "extra")
	wantErr(t, "GetByAppKey of a revoked pair", err, domain.ErrNotFound)
	wantErr(t, "ReserveAppKey of a revoked pair", r.ReserveAppKey(ctx, "a", "extra"), domain.ErrAppKeyTaken)
}

func reserveAppKeyIsForGood(t *testing.T, r domain.Repository) {
	ctx := context.Background()
	mustCreate(t, r, sample("a"))
	wantErr(t, "ReserveAppKey of a listed key", r.ReserveAppKey(ctx, "b", "key-a"), domain.ErrAppKeyTaken)
	if err := r.ReserveAppKey(ctx, "a", "unlisted"); err != nil {
		t.Fatal(err)
	}
	wantErr(t, "second ReserveAppKey", r.ReserveAppKey(ctx, "a", "unlisted"), domain.ErrAppKeyTaken)
	// Reserved but not listed: it authenticates nothing.
	_, err := r.GetByAppKey(ctx, "unlisted")
	wantErr(t, "GetByAppKey of a reserved, unlisted key", err, domain.ErrNotFound)

	// A reservation says whose it is and whether it was retired.
	if res, err := r.AppKeyReservation(ctx, "unlisted"); err != nil || res != (domain.AppKeyReservation{WorkspaceID: "a"}) {
		t.Fatalf("AppKeyReservation before retiring = %+v, %v", res, err)
	}
	if err := r.RetireAppKeys(ctx, []string{"unlisted", "never-reserved"}); err != nil {
		t.Fatal(err)
	}
	if res, err := r.AppKeyReservation(ctx, "unlisted"); err != nil || res != (domain.AppKeyReservation{WorkspaceID: "a", Retired: true}) {
		t.Fatalf("AppKeyReservation after retiring = %+v, %v", res, err)
	}
	_, err = r.AppKeyReservation(ctx, "never-reserved")
	wantErr(t, "AppKeyReservation of a key never reserved", err, domain.ErrNotFound)
	wantErr(t, "ReserveAppKey of a retired key", r.ReserveAppKey(ctx, "a", "unlisted"), domain.ErrAppKeyTaken)
}

func keyUses(t *testing.T, r domain.Repository) {
	ctx := context.Background()
	mustCreate(t, r, sample("a"))
	mustCreate(t, r, sample("b"))
	got, err := r.KeysLastUsed(ctx, []string{"key-a", "key-b", "nope"})
	if err != nil || len(got) != 0 {
		t.Fatalf("KeysLastUsed before any use = %v, %v; want none", got, err)
	}
	if err := r.RecordKeyUse(ctx, "key-a", t0); err != nil {
		t.Fatal(err)
	}
	if err := r.RecordKeyUse(ctx, "key-a", t1); err != nil {
		t.Fatal(err)
	}
	got, err = r.KeysLastUsed(ctx, []string{"key-a", "key-b"})
	if err != nil || len(got) != 1 || !ms(got["key-a"]).Equal(t1) {
		t.Fatalf("KeysLastUsed = %v, %v; want key-a at %v", got, err, t1)
	}
	// Recording an unknown key creates nothing.
	if err := r.RecordKeyUse(ctx, "nope", t1); err != nil {
		t.Fatal(err)
	}
	if err := r.ReserveAppKey(ctx, "a", "nope"); err != nil {
		t.Fatalf("ReserveAppKey after a use of an unknown key: %v", err)
	}
}

func withExpiredKeys(t *testing.T, r domain.Repository) {
	ctx := context.Background()
	for _, id := range []string{"a", "b", "c"} {
		mustCreate(t, r, sample(id))
	}
	// Asked before any pair expires, the store still finds the pairs that
	// expire afterwards.
	if got, err := r.WithExpiredKeys(ctx, t0.Add(2*time.Hour), 10); err != nil || len(got) != 0 {
		t.Fatalf("WithExpiredKeys before any pair expires = %v, %v", got, err)
	}
	for id, expireAfter := range map[string]time.Duration{"a": time.Minute, "b": time.Hour} {
		w := mustGet(t, r, id)
		if err := r.ReserveAppKey(ctx, id, "next-"+id); err != nil {
			t.Fatal(err)
		}
		if _, _, err := w.RotateKey("key-"+id, domain.SealedKey{AppKey: "next-" + id}, expireAfter, t0); err != nil {
			t.Fatal(err)
		}
		mustUpdate(t, r, w)
	}
	got, err := r.WithExpiredKeys(ctx, t0.Add(2*time.Minute), 10)
	if err != nil {
		t.Fatal(err)
	}
	wantIDs(t, "WithExpiredKeys after 2 minutes", got, []string{"a"})
	got, err = r.WithExpiredKeys(ctx, t0.Add(2*time.Hour), 10)
	if err != nil {
		t.Fatal(err)
	}
	wantIDs(t, "WithExpiredKeys after 2 hours", got, []string{"a", "b"})
	got, err = r.WithExpiredKeys(ctx, t0.Add(2*time.Hour), 1)
	if err != nil || len(got) != 1 {
		t.Fatalf("WithExpiredKeys with limit 1 = %v, %v", got, err)
	}
}

func ids(ws []*domain.Workspace) []string {
	out := make([]string, len(ws))
	for i, w := range ws {
		out[i] = w.ID()
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
		after = &domain.ListPosition{NameKey: domain.NameKey(last.Name()), ID: last.ID()}
	}
	wantIDs(t, "pages joined", got, want)
}

func listLeavesOutDeleted(t *testing.T, r domain.Repository) {
	tree(t, r)
	d := mustGet(t, r, "d")
	if err := d.Delete(t1); err != nil {
		t.Fatal(err)
	}
	mustUpdate(t, r, d)
	// d's child stays, still managed by root.
	wantIDs(t, "root's list", list(t, r, domain.ListQuery{VisibleTo: "root"}), []string{"c1", "o", "root"})
}

func rateLimit(w *domain.Workspace) string {
	r, ok := w.RateLimit()
	return fmt.Sprint(r, ok)
}

// compare returns a description of the first difference between two
// workspaces, or "" when they are equal. Empty and nil lists compare equal,
// and times as instants at millisecond precision, which is what stores
// keep.
func compare(got, want *domain.Workspace) string {
	checks := []struct {
		field    string
		got, wnt any
	}{
		{"ID", got.ID(), want.ID()}, {"Name", got.Name(), want.Name()}, {"Type", got.Type(), want.Type()},
		{"ParentID", got.ParentID(), want.ParentID()}, {"Address", got.Address(), want.Address()},
		{"Products", nilIfEmpty(got.Products()), nilIfEmpty(want.Products())},
		{"ObjectiveDocuments", nilIfEmpty(got.ObjectiveDocuments()), nilIfEmpty(want.ObjectiveDocuments())},
		{"RateLimit", rateLimit(got), rateLimit(want)},
		{"Tags", nilIfEmpty(got.Tags()), nilIfEmpty(want.Tags())},
		{"SupportToolID", got.SupportToolID(), want.SupportToolID()},
		{"CreatedBy", got.CreatedBy(), want.CreatedBy()},
		{"Managers", nilIfEmpty(got.Managers()), nilIfEmpty(want.Managers())},
		{"Keys", keys(got.Keys()), keys(want.Keys())},
		{"LTIRegistrations", ltiRegistrations(got.LTIRegistrations().All()), ltiRegistrations(want.LTIRegistrations().All())},
		{"Webhooks", webhooks(got.Webhooks().All()), webhooks(want.Webhooks().All())},
		{"RegistrationCodes", nilIfEmpty(got.RegistrationCodes()), nilIfEmpty(want.RegistrationCodes())},
		{"CreateFingerprint", got.CreateFingerprint(), want.CreateFingerprint()},
		{"CreatedAt", ms(got.CreatedAt()), ms(want.CreatedAt())}, {"UpdatedAt", ms(got.UpdatedAt()), ms(want.UpdatedAt())},
		{"DeletedAt", ms(got.DeletedAt()), ms(want.DeletedAt())}, {"TokenCutoff", ms(got.TokenCutoff()), ms(want.TokenCutoff())},
		{"Revision", got.Revision(), want.Revision()},
	}
	for _, c := range checks {
		if fmt.Sprintf("%#v", c.got) != fmt.Sprintf("%#v", c.wnt) {
			return fmt.Sprintf("%s = %#v, want %#v", c.field, c.got, c.wnt)
		}
	}
	return ""
}

func nilIfEmpty[T any](s []T) []T {
	if len(s) == 0 {
		return nil
	}
	return s
}

func ms(t time.Time) time.Time {
	if t.IsZero() {
		return time.Time{}
	}
	return t.UTC().Truncate(time.Millisecond)
}

func keys(ks []domain.KeyPair) []domain.KeyPair {
	for i := range ks {
		ks[i].CreatedAt, ks[i].UpdatedAt, ks[i].ExpiresAt = ms(ks[i].CreatedAt), ms(ks[i].UpdatedAt), ms(ks[i].ExpiresAt)
		ks[i].Tags = nilIfEmpty(ks[i].Tags)
	}
	return nilIfEmpty(ks)
}

func ltiRegistrations(rs []ltidomain.Registration) []ltidomain.Registration {
	for i := range rs {
		rs[i].CreatedAt, rs[i].UpdatedAt = ms(rs[i].CreatedAt), ms(rs[i].UpdatedAt)
		rs[i].DeploymentIDs = nilIfEmpty(rs[i].DeploymentIDs)
	}
	return nilIfEmpty(rs)
}
