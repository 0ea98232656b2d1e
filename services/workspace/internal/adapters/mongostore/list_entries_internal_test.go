package mongostore

import (
	"fmt"
	"testing"
	"time"

	"github.com/liveproctor/workspaces/services/workspace/internal/domain"
)

func entryOf(id, name, state string, rev int64, deleted bool, managers ...string) string {
	d := workspaceDoc{ID: id, NameKey: domain.NameKey(name), Address: addressDoc{State: state}, Revision: rev, Managers: managers}
	if deleted {
		now := time.Now()
		d.DeletedAt = &now
	}
	return packEntry(&d)
}

func ids(entries []entryFields) string {
	out := make([]string, len(entries))
	for i, e := range entries {
		out[i] = fmt.Sprintf("%s@%d", e.ID, e.Revision)
	}
	return fmt.Sprint(out)
}

// The merge keeps per workspace the entry of the highest revision, from
// the snapshot or the changes, whatever order the changes come in; a
// tombstone hides a workspace until a higher revision brings it back.
func TestMergeKeepsTheHighestRevision(t *testing.T) {
	var snapEntries []entryFields
	for _, s := range []string{
		entryOf("a", "Alpha", "US-CA", 3, false, "root"),
		entryOf("b", "Beta", "US-IL", 2, false, "root"),
		entryOf("c", "Gamma", "US-IL", 5, false, "root"),
		entryOf("d", "", "", 4, true),
	} {
		snapEntries = append(snapEntries, unpackEntry(s))
	}
	snap := newSnapshot("g", snapEntries)
	changes := []changeDoc{
		{Entry: entryOf("a", "Alpha old", "US-CA", 2, false, "root")},  // older than the snapshot: ignored
		{Entry: entryOf("b", "Zeta", "US-CA", 4, false, "root")},       // renamed: moves to the end
		{Entry: entryOf("b", "Beta again", "US-IL", 3, false, "root")}, // between: the later one wins
		{Entry: entryOf("c", "", "", 6, true)},                         // deleted
		{Entry: entryOf("d", "Delta", "US-IL", 3, false, "root")},      // older than its tombstone
		{Entry: entryOf("e", "Epsilon", "US-CA", 1, false, "x", "root")},
		{Entry: entryOf("f", "Phi", "US-CA", 1, false, "root")},
		{Entry: entryOf("f", "", "", 2, true)},
		{Entry: entryOf("f", "Phi", "US-CA", 3, false, "root")}, // undeleted
	}
	v := merge(snap, changes)
	all := func(q domain.ListQuery, n int) string { return ids(v.selectEntries(q, n)) }
	for _, tc := range []struct {
		name string
		q    domain.ListQuery
		n    int
		want string
	}{
		{"everything of root", domain.ListQuery{VisibleTo: "root"}, 10, "[a@3 e@1 f@3 b@4]"},
		{"a page of two", domain.ListQuery{VisibleTo: "root"}, 2, "[a@3 e@1]"},
		{"after e", domain.ListQuery{VisibleTo: "root", After: &domain.ListPosition{NameKey: "epsilon", ID: "e"}}, 2, "[f@3 b@4]"},
		{"after a name between", domain.ListQuery{VisibleTo: "root", After: &domain.ListPosition{NameKey: "b", ID: "zz"}}, 10, "[e@1 f@3 b@4]"},
		{"a state", domain.ListQuery{VisibleTo: "root", States: []string{"US-CA"}}, 10, "[a@3 e@1 f@3 b@4]"},
		{"another state", domain.ListQuery{VisibleTo: "root", States: []string{"US-IL"}}, 10, "[]"},
		{"a search", domain.ListQuery{VisibleTo: "root", NameContains: "ph"}, 10, "[a@3 f@3]"},
		{"a workspace itself", domain.ListQuery{VisibleTo: "e"}, 10, "[e@1]"},
		{"a second manager", domain.ListQuery{VisibleTo: "x"}, 10, "[e@1]"},
		{"a deleted one itself", domain.ListQuery{VisibleTo: "c"}, 10, "[]"},
		{"nobody", domain.ListQuery{VisibleTo: ""}, 10, "[]"},
	} {
		if got := all(tc.q, tc.n); got != tc.want {
			t.Errorf("%s: %s, want %s", tc.name, got, tc.want)
		}
	}
	// The next snapshot holds every workspace once, tombstones included,
	// in list order.
	if got, want := ids(v.all()), "[c@6 d@4 a@3 e@1 f@3 b@4]"; got != want {
		t.Errorf("all = %s, want %s", got, want)
	}
}

// An entry packs and unpacks to the same fields, a tombstone as one
// visible to nobody.
func TestEntryRoundTrip(t *testing.T) {
	e := unpackEntry(entryOf("w-1", "Springfield High", "US-CA", 7, false, "root", "district"))
	if e.NameKey != "springfield high" || e.ID != "w-1" || e.State != "US-CA" || e.Revision != 7 || fmt.Sprint(e.VisibleTo) != "[w-1 root district]" {
		t.Fatalf("unpacked %+v", e)
	}
	if again := packFields(e); again != entryOf("w-1", "Springfield High", "US-CA", 7, false, "root", "district") {
		t.Fatalf("packFields = %q", again)
	}
	tomb := unpackEntry(entryOf("w-1", "Springfield High", "US-CA", 8, true, "root"))
	if tomb.ID != "w-1" || tomb.Revision != 8 || len(tomb.VisibleTo) != 0 || packFields(tomb) != entryOf("w-1", "", "", 8, true) {
		t.Fatalf("tombstone %+v", tomb)
	}
}
