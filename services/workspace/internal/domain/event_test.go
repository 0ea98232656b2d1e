package domain_test

import (
	"slices"
	"testing"
	"time"

	"github.com/liveproctor/workspaces/pkg/fault"
	"github.com/liveproctor/workspaces/services/workspace/internal/domain"
)

func TestEventIDsSortByTime(t *testing.T) {
	t0 := time.Date(2026, 11, 22, 8, 0, 0, 0, time.UTC)
	var ids []string
	for i := range 50 {
		ids = append(ids, new(domain.EventIDSource).Next(t0.Add(time.Duration(i)*time.Millisecond)))
	}
	if !slices.IsSorted(ids) {
		t.Fatalf("ids made later sort earlier: %v", ids)
	}
	for i, id := range ids {
		if len(id) != domain.EventIDLength {
			t.Fatalf("id %q: length %d, want %d", id, len(id), domain.EventIDLength)
		}
		got, ok := domain.EventIDTime(id)
		if want := t0.Add(time.Duration(i) * time.Millisecond); !ok || !got.Equal(want) {
			t.Fatalf("EventIDTime(%q) = %v, %v; want %v", id, got, ok, want)
		}
		// The floor of a time separates the ids made before it from those made in it or after.
		floor := domain.EventIDFloor(t0.Add(time.Duration(i) * time.Millisecond))
		if id < floor || i > 0 && ids[i-1] >= floor {
			t.Fatalf("floor %q does not separate %q from the ids before it", floor, id)
		}
	}
	if a, b := new(domain.EventIDSource).Next(t0), new(domain.EventIDSource).Next(t0); a == b {
		t.Fatalf("two ids of one millisecond are equal: %s", a)
	}
	for _, bad := range []string{"", "xyz", "01a2106d8ce24a77e4184f9b634", "01A2106D8CE24A77E4184F9B6348", "01a2106d8ce24a77e4184f9b634g"} {
		if _, ok := domain.EventIDTime(bad); ok {
			t.Errorf("EventIDTime(%q) accepted", bad)
		}
	}
}

func TestEntityRecordsItsChanges(t *testing.T) {
	now := time.Date(2026, 11, 22, 8, 0, 0, 0, time.UTC)
	root, err := domain.NewRootWorkspace("root", domain.Details{Name: "Root", Type: domain.TypeDistrict}, domain.SealedKey{AppKey: "k"}, now)
	if err != nil {
		t.Fatal(err)
	}
	if got := root.PendingEvents(); len(got) != 1 || got[0].Type != domain.EventWorkspaceBootstrapped || got[0].Key != "root/1/0" {
		t.Fatalf("root's events = %+v", got)
	}
	w := domain.UnmarshalWorkspaceFromDatabase(domain.StoredWorkspace{ID: "w", Name: "W", Type: domain.TypeCampus,
		Managers: []string{"root"}, Products: []string{"a/b"}, Revision: 4})
	name, products := "New", []string{"a/b"}
	if err := w.Update(domain.Changes{Name: &name, Products: &products}, now); err != nil {
		t.Fatal(err)
	}
	if err := w.Delete(now); err != nil {
		t.Fatal(err)
	}
	w.Attribute(domain.Actor{WorkspaceID: "root", AppKey: "k"}, "req-1")
	got := w.PendingEvents()
	if len(got) != 2 || got[0].Type != domain.EventWorkspaceUpdated || !slices.Equal(got[0].ChangedFields, []string{"name"}) ||
		got[0].Key != "w/5/0" || got[1].Key != "w/5/1" || got[1].Type != domain.EventWorkspaceDeleted ||
		!slices.Equal(got[1].Managers, []string{"root"}) || got[1].RequestID != "req-1" || got[1].Actor.AppKey != "k" {
		t.Fatalf("events = %+v", got)
	}
}

func TestCheckEventQuery(t *testing.T) {
	types, size, err := domain.CheckEventQuery([]string{"workspace.deleted", "workspace.created", "workspace.deleted"}, nil)
	if err != nil || size != domain.DefaultEventPageSize || !slices.Equal(types, []domain.EventType{"workspace.created", "workspace.deleted"}) {
		t.Fatalf("= %v, %d, %v", types, size, err)
	}
	zero, big := int32(0), int32(1001)
	for _, c := range []struct {
		types []string
		size  *int32
		field string
	}{{[]string{"nope"}, nil, "type"}, {nil, &zero, "pageSize"}, {nil, &big, "pageSize"}} {
		_, _, err := domain.CheckEventQuery(c.types, c.size)
		e, ok := fault.As(err)
		if !ok || e.Kind != fault.Invalid || len(e.Fields) == 0 || e.Fields[0].Field != c.field {
			t.Errorf("CheckEventQuery(%v, %v) = %v, want Invalid naming %s", c.types, c.size, err, c.field)
		}
	}
}

// Ids from one source sort in the order it made them: within a millisecond,
// and when the clock steps back.
func TestEventIDSourceIsMonotonic(t *testing.T) {
	var src domain.EventIDSource
	t0 := time.Date(2026, 11, 22, 8, 0, 0, 0, time.UTC)
	times := []time.Time{t0, t0, t0, t0.Add(-time.Second), t0.Add(time.Millisecond), t0.Add(time.Millisecond)}
	prev := ""
	for i, at := range times {
		id := src.Next(at)
		if _, ok := domain.EventIDTime(id); !ok || id <= prev {
			t.Fatalf("id %d = %q after %q", i, id, prev)
		}
		prev = id
	}
}
