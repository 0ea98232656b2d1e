package repotest

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/liveproctor/workspaces/services/workspace/internal/domain"
)

// listAgreesWithSelects: whatever a store's list query is, it returns what
// domain.ListQuery.Selects decides, in list order, cut at the limit. The
// workspaces form a tree of managers, with names that differ only in case,
// names holding regular-expression characters, several states and some
// deleted; the queries combine callers, searches, states, starting points
// and limits at random (with a fixed seed, so a failure repeats).
func listAgreesWithSelects(t *testing.T, r domain.Repository) {
	ctx := context.Background()
	rnd := rand.New(rand.NewPCG(20, 11))
	names := []string{"Alpha", "alpha", "ALPHA school", "Beta Campus", "beta.campus", "a+b (2)", "Zeta", "zeta", "Ωmega", "Lake [north]", "x*y"}
	states := []string{"", "US-CA", "US-TX", "FR-ARA"}

	root := sample("root")
	root.Name, root.CreatedBy, root.Managers = "Root", "", nil
	mustCreate(t, r, root)
	managers := map[string][]string{"root": nil}
	ids := []string{"root"}
	for i := range 40 {
		s := sample(fmt.Sprintf("w%02d", i))
		creator := ids[rnd.IntN(len(ids))]
		s.CreatedBy, s.Managers = creator, append([]string{creator}, managers[creator]...)
		s.Name = names[rnd.IntN(len(names))]
		s.Address.State = states[rnd.IntN(len(states))]
		mustCreate(t, r, s)
		managers[s.ID] = s.Managers
		ids = append(ids, s.ID)
	}
	for _, id := range ids[1:] {
		if rnd.IntN(5) == 0 {
			w := mustGet(t, r, id)
			if err := w.Delete(t1); err != nil {
				t.Fatal(err)
			}
			mustUpdate(t, r, w)
		}
	}
	all := make([]*domain.Workspace, len(ids))
	for i, id := range ids {
		all[i] = mustGet(t, r, id)
	}

	searches := []string{"", "a", "alpha", "eta", ".", "+", "(2)", "[", "*", "ta c", "ωm", "nothing"}
	callers := append(slices.Clone(ids), "stranger")
	for n := range 300 {
		q := domain.ListQuery{
			VisibleTo:    callers[rnd.IntN(len(callers))],
			NameContains: searches[rnd.IntN(len(searches))],
			Limit:        []int{1, 2, 3, 7, 1000}[rnd.IntN(5)],
		}
		for _, s := range states {
			if rnd.IntN(3) == 0 {
				q.States = append(q.States, s)
			}
		}
		switch rnd.IntN(3) {
		case 1:
			pos := domain.PositionOf(all[rnd.IntN(len(all))])
			q.After = &pos
		case 2:
			q.After = &domain.ListPosition{NameKey: domain.NameKey(names[rnd.IntN(len(names))]), ID: fmt.Sprintf("w%02d", rnd.IntN(45))}
		}
		var want []string
		for _, w := range all {
			if q.Selects(w) {
				want = append(want, w.ID())
			}
		}
		slices.SortFunc(want, func(a, b string) int {
			return position(all, ids, a).Compare(position(all, ids, b))
		})
		if len(want) > q.Limit {
			want = want[:q.Limit]
		}
		got, err := r.List(ctx, q)
		if err != nil {
			t.Fatalf("query %d %s: %v", n, describe(q), err)
		}
		if !slices.Equal(idsOf(got), nonNilIDs(want)) {
			t.Fatalf("query %d %s: List = %v, Selects gives %v", n, describe(q), idsOf(got), want)
		}
	}
}

func position(all []*domain.Workspace, ids []string, id string) domain.ListPosition {
	return domain.PositionOf(all[slices.Index(ids, id)])
}

func idsOf(ws []*domain.Workspace) []string { return nonNilIDs(ids(ws)) }

func nonNilIDs(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

func describe(q domain.ListQuery) string {
	after := "start"
	if q.After != nil {
		after = fmt.Sprintf("(%q, %q)", q.After.NameKey, q.After.ID)
	}
	return fmt.Sprintf("{caller %q, search %q, states [%s], after %s, limit %d}",
		q.VisibleTo, q.NameContains, strings.Join(q.States, " "), after, q.Limit)
}
