package domain_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/liveproctor/workspaces/pkg/fault"
	"github.com/liveproctor/workspaces/services/workspace/internal/domain"
	ltidomain "github.com/liveproctor/workspaces/services/workspace/internal/lti/domain"
)

var rest = []domain.Tag{domain.RESTAccessTag}

func wantErrIs(t *testing.T, what string, err, want error) {
	t.Helper()
	if !errors.Is(err, want) {
		t.Fatalf("%s: error = %v, want %v", what, err, want)
	}
}

func TestNewWorkspacePairsAreNamedByRole(t *testing.T) {
	w := mustCreate(t, "w", mustRoot(t))
	for _, k := range w.Keys() {
		if k.Name != string(k.Role) || !k.ExpiresAt.IsZero() {
			t.Fatalf("pair %s: name %q expires %v", k.AppKey, k.Name, k.ExpiresAt)
		}
	}
	// Pairs stored before they had names read as their role.
	s := domain.StoredWorkspace{ID: "old", Keys: []domain.KeyPair{{AppKey: "k", Role: domain.RoleBootstrap}}}
	if k, _ := domain.UnmarshalWorkspaceFromDatabase(s).KeyByAppKey("k"); k.Name != "bootstrap" {
		t.Fatalf("an unnamed stored pair reads as %q", k.Name)
	}
}

func TestCreateKey(t *testing.T) {
	w := mustCreate(t, "w", mustRoot(t))
	k, err := w.CreateKey(domain.NewKey{Name: "  ci  ", Tags: rest}, sealed("ci"), t1)
	if err != nil {
		t.Fatal(err)
	}
	if k.Name != "ci" || k.Role != domain.RoleServer || !k.HasRESTAccess() || !k.CreatedAt.Equal(t1) {
		t.Fatalf("created REST pair: %+v", k)
	}
	lti, err := w.CreateKey(domain.NewKey{Name: "moodle"}, sealed("moodle"), t1)
	if err != nil || lti.Role != domain.RoleLTI || lti.HasRESTAccess() {
		t.Fatalf("a pair without the REST tag: %+v, %v", lti, err)
	}
	if _, err := w.LTIKey("moodle", t1); err != nil {
		t.Fatalf("a created LTI pair signs launches: %v", err)
	}

	for name, in := range map[string]struct {
		key   domain.NewKey
		field string
	}{
		"no name":       {domain.NewKey{Name: "  "}, "name"},
		"long name":     {domain.NewKey{Name: strings.Repeat("x", 101)}, "name"},
		"control":       {domain.NewKey{Name: "a\nb"}, "name"},
		"tag key":       {domain.NewKey{Name: "x", Tags: []domain.Tag{{Type: "string"}}}, "tags[0].key"},
		"long tag":      {domain.NewKey{Name: "x", Tags: []domain.Tag{{Key: "k", Value: strings.Repeat("v", 201)}}}, "tags[0].value"},
		"too many tags": {domain.NewKey{Name: "x", Tags: make([]domain.Tag, 21)}, "tags"},
	} {
		_, err := w.CreateKey(in.key, sealed("bad"), t1)
		e, ok := fault.As(err)
		if !ok || e.Kind != fault.Invalid || len(e.Fields) == 0 || e.Fields[0].Field != in.field {
			t.Errorf("%s: %v, want invalid %s", name, err, in.field)
		}
	}
}

func TestAtMostTenActiveKeys(t *testing.T) {
	w := mustCreate(t, "w", mustRoot(t)) // server and LTI
	for i := range 8 {
		if _, err := w.CreateKey(domain.NewKey{Name: "k", Tags: rest}, sealed(fmt.Sprint("k", i)), t0); err != nil {
			t.Fatal(err)
		}
	}
	_, err := w.CreateKey(domain.NewKey{Name: "eleventh"}, sealed("x"), t0)
	wantErrIs(t, "the eleventh pair", err, domain.ErrTooManyKeys)
	if fault.KindOf(err) != fault.FailedPrecondition {
		t.Fatalf("kind %v", fault.KindOf(err))
	}
	_, _, err = w.RotateKey("w-server", sealed("next"), time.Hour, t0)
	wantErrIs(t, "a rotation at the bound", err, domain.ErrTooManyKeys)

	// An expired pair counts no more, swept or not.
	if _, err := w.RevokeKey("k0", t0); err != nil {
		t.Fatal(err)
	}
	if _, _, err := w.RotateKey("k1", sealed("k1-next"), time.Minute, t0); err != nil {
		t.Fatal(err)
	}
	_, err = w.CreateKey(domain.NewKey{Name: "while overlapping"}, sealed("y"), t0)
	wantErrIs(t, "a pair during the overlap", err, domain.ErrTooManyKeys)
	if _, err := w.CreateKey(domain.NewKey{Name: "after"}, sealed("z"), t0.Add(time.Minute)); err != nil {
		t.Fatalf("a pair once the rotated one expired: %v", err)
	}
}

func TestRotateKey(t *testing.T) {
	w := mustCreate(t, "w", mustRoot(t))
	old, next, err := w.RotateKey("w-lti", sealed("w-lti-2"), 2*time.Hour, t1)
	if err != nil {
		t.Fatal(err)
	}
	if !old.ExpiresAt.Equal(t1.Add(2*time.Hour)) || !old.UpdatedAt.Equal(t1) {
		t.Fatalf("rotated pair: %+v", old)
	}
	if next.Name != "lti" || next.Role != domain.RoleLTI || next.HasRESTAccess() || !next.ExpiresAt.IsZero() {
		t.Fatalf("successor: %+v", next)
	}
	// Both sign launches during the overlap; then only the successor.
	for _, at := range []time.Time{t1, t1.Add(2*time.Hour - time.Millisecond)} {
		if _, err := w.LTIKey("w-lti", at); err != nil {
			t.Fatalf("old pair at %v: %v", at, err)
		}
	}
	_, err = w.LTIKey("w-lti", t1.Add(2*time.Hour))
	wantErrIs(t, "old pair at its expiresAt", err, ltidomain.ErrLaunchUnknownKey)
	if _, err := w.LTIKey("w-lti-2", t1.Add(3*time.Hour)); err != nil {
		t.Fatal(err)
	}

	_, _, err = w.RotateKey("w-lti", sealed("again"), time.Hour, t1)
	wantErrIs(t, "rotating a rotated pair", err, domain.ErrKeyExpiring)
	_, _, err = w.RotateKey("w-lti", sealed("again"), time.Hour, t1.Add(3*time.Hour))
	wantErrIs(t, "rotating an expired pair", err, domain.ErrKeyNotFound)
	_, _, err = w.RotateKey("nope", sealed("again"), time.Hour, t1)
	wantErrIs(t, "rotating an unknown pair", err, domain.ErrKeyNotFound)
	for _, d := range []time.Duration{-time.Second, domain.MaxExpireAfter + time.Second} {
		_, _, err = w.RotateKey("w-server", sealed("again"), d, t1)
		if e, ok := fault.As(err); !ok || e.Kind != fault.Invalid || e.Fields[0].Field != "expireAfter" {
			t.Fatalf("expireAfter %v: %v", d, err)
		}
	}
	if _, _, err := w.RotateKey("w-server", sealed("w-server-2"), 0, t1); err != nil {
		t.Fatalf("no overlap: %v", err)
	}
	if k, ok := w.ActiveKey("w-server", t1); ok {
		t.Fatalf("a pair rotated with no overlap is still active: %+v", k)
	}
}

func TestRevokeKeepsALastingRESTPair(t *testing.T) {
	w := mustCreate(t, "w", mustRoot(t))
	_, err := w.RevokeKey("w-server", t0)
	wantErrIs(t, "revoking the only REST pair", err, domain.ErrLastLastingKey)
	if fault.KindOf(err) != fault.FailedPrecondition {
		t.Fatalf("kind %v", fault.KindOf(err))
	}
	// An expiring REST pair does not keep the workspace reachable.
	if _, _, err := w.RotateKey("w-server", sealed("next"), time.Hour, t0); err != nil {
		t.Fatal(err)
	}
	_, err = w.RevokeKey("next", t0)
	wantErrIs(t, "revoking the successor while the old pair expires", err, domain.ErrLastLastingKey)
	if removed, err := w.RevokeKey("w-server", t0); err != nil || removed.AppKey != "w-server" {
		t.Fatalf("revoking the rotated pair: %+v, %v", removed, err)
	}
	if removed, err := w.RevokeKey("w-lti", t0); err != nil || removed.AppKey != "w-lti" {
		t.Fatalf("revoking the LTI pair: %+v, %v", removed, err)
	}
	if _, ok := w.KeyByAppKey("w-lti"); ok {
		t.Fatal("a revoked pair is still held")
	}
	_, err = w.RevokeKey("w-lti", t0)
	wantErrIs(t, "revoking twice", err, domain.ErrKeyNotFound)

	if err := w.Delete(t1); err != nil {
		t.Fatal(err)
	}
	_, err = w.RevokeKey("next", t1)
	wantErrIs(t, "revoking in a deleted workspace", err, domain.ErrDeleted)
}

func TestRemoveExpiredKeys(t *testing.T) {
	w := mustCreate(t, "w", mustRoot(t))
	if _, _, err := w.RotateKey("w-server", sealed("s2"), time.Minute, t0); err != nil {
		t.Fatal(err)
	}
	if _, _, err := w.RotateKey("w-lti", sealed("l2"), time.Hour, t0); err != nil {
		t.Fatal(err)
	}
	if removed := w.RemoveExpiredKeys(t0.Add(time.Minute - time.Millisecond)); len(removed) != 0 {
		t.Fatalf("removed before expiry: %v", removed)
	}
	removed := w.RemoveExpiredKeys(t0.Add(time.Minute))
	if len(removed) != 1 || removed[0].AppKey != "w-server" {
		t.Fatalf("removed %+v, want w-server", removed)
	}
	if len(w.Keys()) != 3 {
		t.Fatalf("left %d pairs, want 3", len(w.Keys()))
	}
	removed = w.RemoveExpiredKeys(t0.Add(24 * time.Hour))
	if len(removed) != 1 || removed[0].AppKey != "w-lti" {
		t.Fatalf("removed %+v, want w-lti", removed)
	}
}

// Every key-pair change is an event about that pair, recorded with the
// change: the app key is its target, never the secret.
func TestKeyChangesAreEvents(t *testing.T) {
	stored := mustCreate(t, "w", mustRoot(t)).Keys()
	w := domain.UnmarshalWorkspaceFromDatabase(domain.StoredWorkspace{ID: "w", Name: "W", Type: domain.TypeCampus,
		Managers: []string{"root"}, Keys: stored, Revision: 1})
	if _, err := w.CreateKey(domain.NewKey{Name: "ci", Tags: rest}, sealed("w-ci"), t1); err != nil {
		t.Fatal(err)
	}
	if _, _, err := w.RotateKey("w-lti", sealed("w-lti-2"), time.Hour, t1); err != nil {
		t.Fatal(err)
	}
	if _, err := w.RevokeKey("w-ci", t1); err != nil {
		t.Fatal(err)
	}
	if removed := w.RemoveExpiredKeys(t1.Add(time.Hour)); len(removed) != 1 {
		t.Fatalf("removed %d expired pairs", len(removed))
	}
	type ev struct {
		typ    domain.EventType
		target string
	}
	want := []ev{
		{domain.EventKeyPairCreated, "w-ci"},
		{domain.EventKeyPairRotated, "w-lti"},
		{domain.EventKeyPairCreated, "w-lti-2"},
		{domain.EventKeyPairRevoked, "w-ci"},
		{domain.EventKeyPairExpired, "w-lti"},
	}
	got := w.PendingEvents()
	if len(got) != len(want) {
		t.Fatalf("events = %+v", got)
	}
	for i, e := range got {
		if e.Type != want[i].typ || e.Target != (domain.Target{Type: domain.TargetKeyPair, ID: want[i].target}) ||
			e.Key != fmt.Sprintf("w/2/%d", i) {
			t.Errorf("event %d = %+v, want %v", i, e, want[i])
		}
	}
}
