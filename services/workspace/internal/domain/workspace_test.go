package domain_test

import (
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/liveproctor/workspaces/services/workspace/internal/domain"
)

var (
	t0 = time.Date(2026, 11, 22, 7, 46, 0, 0, time.UTC)
	t1 = t0.Add(time.Hour)
)

func sealed(appKey string) domain.SealedKey {
	return domain.SealedKey{AppKey: appKey, SealedSecret: []byte("sealed-" + appKey), SecretDigest: []byte("digest-" + appKey)}
}

func credentials(id string) domain.Credentials {
	return domain.Credentials{Server: sealed(id + "-server"), LTI: sealed(id + "-lti"), RegistrationCode: "CODE-" + id}
}

func mustRoot(t *testing.T) *domain.Workspace {
	t.Helper()
	root, err := domain.NewRootWorkspace("root", domain.Details{Name: "Root", Type: domain.TypeDistrict, Products: []string{"pub/math"}}, sealed("root-key"), t0)
	if err != nil {
		t.Fatal(err)
	}
	return root
}

func mustCreate(t *testing.T, id string, creator *domain.Workspace) *domain.Workspace {
	t.Helper()
	w, err := domain.NewWorkspace(id, domain.Details{Name: "Workspace " + id, Type: domain.TypeCampus}, creator, credentials(id), "fp-"+id, t0)
	if err != nil {
		t.Fatal(err)
	}
	return w
}

func TestNewRootWorkspace(t *testing.T) {
	root := mustRoot(t)
	if root.CreatedBy() != "" || len(root.Managers()) != 0 || len(root.RegistrationCodes()) != 0 {
		t.Errorf("root: created by %q, managers %v, codes %v; want none", root.CreatedBy(), root.Managers(), root.RegistrationCodes())
	}
	keys := root.Keys()
	if len(keys) != 1 || keys[0].Role != domain.RoleBootstrap || !keys[0].HasRESTAccess() || keys[0].AppKey != "root-key" {
		t.Errorf("root keys = %+v", keys)
	}
	if root.Revision() != 0 || !root.CreatedAt().Equal(t0) || !root.UpdatedAt().Equal(t0) || root.Deleted() {
		t.Errorf("root: revision %d created %v updated %v deleted %v", root.Revision(), root.CreatedAt(), root.UpdatedAt(), root.Deleted())
	}
	_, err := domain.NewRootWorkspace("a:b", domain.Details{Type: domain.TypeDistrict}, sealed("k"), t0)
	expect(t, err, "id", "name")
}

func TestNewWorkspaceIsManagedByItsCreatorsManagers(t *testing.T) {
	root := mustRoot(t)
	district := mustCreate(t, "district", root)
	campus := mustCreate(t, "campus", district)
	if got := campus.Managers(); !slices.Equal(got, []string{"district", "root"}) || campus.CreatedBy() != "district" {
		t.Errorf("campus: managers %v, created by %q", got, campus.CreatedBy())
	}
	for _, tt := range []struct {
		caller      string
		manages     bool
		visibleTo   bool
		description string
	}{
		{"root", true, true, "the creator's creator"},
		{"district", true, true, "the creator"},
		{"campus", false, true, "itself"},
		{"other", false, false, "a stranger"},
	} {
		if campus.ManagedBy(tt.caller) != tt.manages || campus.VisibleTo(tt.caller) != tt.visibleTo {
			t.Errorf("%s: manages %v, sees %v", tt.description, campus.ManagedBy(tt.caller), campus.VisibleTo(tt.caller))
		}
	}
}

func TestNewWorkspaceHasAServerAndAnLTIKeyPair(t *testing.T) {
	w := mustCreate(t, "w", mustRoot(t))
	server, ok := w.KeyByRole(domain.RoleServer)
	if !ok || server.AppKey != "w-server" || !server.HasRESTAccess() || !server.CreatedAt.Equal(t0) {
		t.Errorf("server pair = %+v (found %v)", server, ok)
	}
	lti, ok := w.KeyByRole(domain.RoleLTI)
	if !ok || lti.AppKey != "w-lti" || lti.HasRESTAccess() || lti.Tags == nil {
		t.Errorf("LTI pair = %+v (found %v); want no API access and an empty tag list", lti, ok)
	}
	if k, ok := w.KeyByAppKey("w-lti"); !ok || k.Role != domain.RoleLTI {
		t.Errorf("KeyByAppKey(w-lti) = %+v, %v", k, ok)
	}
	if got := w.RegistrationCodes(); !slices.Equal(got, []string{"CODE-w"}) || w.CreateFingerprint() != "fp-w" {
		t.Errorf("codes %v, fingerprint %q", got, w.CreateFingerprint())
	}
}

func TestNewWorkspaceChecksWhatTheCallerChose(t *testing.T) {
	root := mustRoot(t)
	_, err := domain.NewWorkspace("a:b", domain.Details{Name: " ", Type: "SCHOOL", ParentID: "x y",
		Products: []string{"nobank"}}, root, credentials("w"), "", t0)
	expect(t, err, "id", "name", "type", "parent", "products[0]")
	_, err = domain.NewWorkspace("w", domain.Details{Name: "W", Type: domain.TypeCampus, ParentID: "w"}, root, credentials("w"), "", t0)
	expect(t, err, "parent")

	products := []string{"pub/math"}
	w, err := domain.NewWorkspace("w", domain.Details{Name: "  W ", Type: domain.TypeCampus, Products: products}, root, credentials("w"), "", t0)
	if err != nil || w.Name() != "W" {
		t.Fatalf("NewWorkspace = %v, %v; want the name trimmed", w, err)
	}
	products[0] = "pub/changed"
	if got := w.Products(); !slices.Equal(got, []string{"pub/math"}) {
		t.Errorf("products %v changed with the caller's slice", got)
	}
}

func TestUpdateSetsWhatTheChangesSet(t *testing.T) {
	root := mustRoot(t)
	w, err := domain.NewWorkspace("w", domain.Details{Name: "W", Type: domain.TypeCampus, ParentID: "p",
		Address: domain.Address{Country: "US"}, Products: []string{"pub/math"}}, root, credentials("w"), "", t0)
	if err != nil {
		t.Fatal(err)
	}
	name, docs := " Renamed ", []string{"CCSS#Math#Grade5:2010"}
	if err := w.Update(domain.Changes{Name: &name, ObjectiveDocuments: &docs}, t1); err != nil {
		t.Fatal(err)
	}
	if w.Name() != "Renamed" || w.ParentID() != "p" || w.Type() != domain.TypeCampus || w.Address().Country != "US" ||
		!slices.Equal(w.Products(), []string{"pub/math"}) || !slices.Equal(w.ObjectiveDocuments(), docs) || !w.UpdatedAt().Equal(t1) {
		t.Errorf("after update: %q %q %q %+v %v %v %v", w.Name(), w.ParentID(), w.Type(), w.Address(), w.Products(), w.ObjectiveDocuments(), w.UpdatedAt())
	}
	noParent, none := "", []string{}
	if err := w.Update(domain.Changes{ParentID: &noParent, Products: &none}, t1); err != nil || w.ParentID() != "" || len(w.Products()) != 0 {
		t.Errorf("clearing: parent %q products %v, %v", w.ParentID(), w.Products(), err)
	}

	blank, self := "", "w"
	expect(t, w.Update(domain.Changes{Name: &blank}, t1), "name")
	if w.Name() != "Renamed" {
		t.Errorf("a refused update changed the name to %q", w.Name())
	}
	expect(t, w.Update(domain.Changes{ParentID: &self}, t1), "parent")
}

func TestDeleteAndUndelete(t *testing.T) {
	w := mustCreate(t, "w", mustRoot(t))
	if w.Undelete(t1) {
		t.Error("undelete of an active workspace reported a change")
	}
	if !w.TokenCutoff().IsZero() || !w.UpdatedAt().Equal(t0) {
		t.Errorf("undelete of an active workspace changed it: cutoff %v updated %v", w.TokenCutoff(), w.UpdatedAt())
	}
	if err := w.Delete(t1); err != nil {
		t.Fatal(err)
	}
	if !w.Deleted() || !w.DeletedAt().Equal(t1) || !w.TokenCutoff().Equal(t1) || !w.UpdatedAt().Equal(t1) {
		t.Errorf("after delete: deleted %v cutoff %v updated %v", w.DeletedAt(), w.TokenCutoff(), w.UpdatedAt())
	}
	if err := w.Delete(t1); !errors.Is(err, domain.ErrDeleted) {
		t.Errorf("second delete: %v", err)
	}
	name := "N"
	if err := w.Update(domain.Changes{Name: &name}, t1); !errors.Is(err, domain.ErrDeleted) {
		t.Errorf("update of a deleted workspace: %v", err)
	}
	t2 := t1.Add(time.Minute)
	if !w.Undelete(t2) || w.Deleted() || !w.TokenCutoff().Equal(t2) || !w.UpdatedAt().Equal(t2) {
		t.Errorf("after undelete: deleted %v cutoff %v updated %v", w.DeletedAt(), w.TokenCutoff(), w.UpdatedAt())
	}
}

func TestGettersReturnCopies(t *testing.T) {
	w := mustCreate(t, "w", mustCreate(t, "d", mustRoot(t)))
	w.Managers()[0] = "intruder"
	w.Keys()[0].Tags[0] = domain.Tag{}
	w.RegistrationCodes()[0] = "X"
	if w.ManagedBy("intruder") || !w.Keys()[0].HasRESTAccess() || w.RegistrationCodes()[0] != "CODE-w" {
		t.Error("a getter's result changed the workspace")
	}
}

func TestUnmarshalWorkspaceFromDatabase(t *testing.T) {
	s := domain.StoredWorkspace{
		ID: "w", Name: "W", Type: domain.TypeCampus, ParentID: "p", Address: domain.Address{City: "Austin"},
		Products: []string{"pub/math"}, ObjectiveDocuments: []string{"A#B#C:2020"}, Tags: []domain.Tag{{Key: "k"}},
		SupportToolID: "tool", CreatedBy: "p", Managers: []string{"p", "root"},
		Keys:              []domain.KeyPair{domain.NewKeyPair(domain.RoleServer, sealed("k"), t0)},
		RegistrationCodes: []string{"C"}, CreateFingerprint: "fp",
		CreatedAt: t0, UpdatedAt: t1, DeletedAt: t1, TokenCutoff: t1, Revision: 7,
	}
	w := domain.UnmarshalWorkspaceFromDatabase(s)
	if w.ID() != "w" || w.Name() != "W" || w.Type() != domain.TypeCampus || w.ParentID() != "p" || w.Address().City != "Austin" ||
		!slices.Equal(w.Products(), s.Products) || !slices.Equal(w.ObjectiveDocuments(), s.ObjectiveDocuments) ||
		!slices.Equal(w.Tags(), s.Tags) || w.SupportToolID() != "tool" || w.CreatedBy() != "p" ||
		!slices.Equal(w.Managers(), s.Managers) || len(w.Keys()) != 1 || !slices.Equal(w.RegistrationCodes(), s.RegistrationCodes) ||
		w.CreateFingerprint() != "fp" || !w.CreatedAt().Equal(t0) || !w.UpdatedAt().Equal(t1) || !w.DeletedAt().Equal(t1) ||
		!w.TokenCutoff().Equal(t1) || w.Revision() != 7 {
		t.Errorf("loaded workspace differs from what was stored: %+v", w)
	}
	// Stored workspaces load whatever rules they break today.
	if w := domain.UnmarshalWorkspaceFromDatabase(domain.StoredWorkspace{ID: "old", Type: "SCHOOL"}); w.Type() != "SCHOOL" {
		t.Errorf("type %q", w.Type())
	}
}
