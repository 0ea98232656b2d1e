package app_test

import (
	"cmp"
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/liveproctor/workspaces/pkg/fault"
	"github.com/liveproctor/workspaces/services/workspace/internal/app"
	"github.com/liveproctor/workspaces/services/workspace/internal/domain"
)

// Whatever a caller sends as search, states, page size and page token, a
// list answers Invalid or a page: at most pageSize workspaces matching the
// search, in list order; and paging from the start with the same query
// visits every match once.
func FuzzListWorkspaces(f *testing.F) {
	fx := newFixture(f)
	for i, name := range []string{"Springfield", "spring valley", "Shelbyville", "SPRINGS", "Ogdenville", "spring valley"} {
		fx.create(fx.root, app.CreateInput{ID: fmt.Sprintf("w%d", i), Name: name})
	}
	f.Add("spring", "", int32(2), "")
	f.Add("", "US-IL", int32(1), "garbage")
	f.Add("É", "", int32(0), "eyJrIjoiIiwiaSI6IngiLCJmIjoiIn0")
	f.Add("\xff", "\x00", int32(1001), "e30")
	f.Add(strings.Repeat("s", 201), "", int32(-1), "")
	ctx := context.Background()
	f.Fuzz(func(t *testing.T, search, state string, pageSize int32, token string) {
		in := app.ListInput{Search: search, PageSize: &pageSize, PageToken: token}
		if state != "" {
			in.States = []string{state}
		}
		res, err := fx.app.ListWorkspaces(ctx, fx.root, in)
		if err != nil {
			if k := fault.KindOf(err); k != fault.Invalid {
				t.Fatalf("list %+v: %v (kind %v), want Invalid", in, err, k)
			}
			return
		}
		if len(res.Workspaces) > int(pageSize) {
			t.Fatalf("list %+v: %d workspaces on a page of %d", in, len(res.Workspaces), pageSize)
		}
		checkListed(t, res.Workspaces, search)

		// From the first page on, each match once.
		in.PageToken = ""
		seen := map[string]bool{}
		for pages := 0; ; pages++ {
			res, err := fx.app.ListWorkspaces(ctx, fx.root, in)
			if err != nil || pages > 10 {
				t.Fatalf("page %d of %+v: %v", pages, in, err)
			}
			checkListed(t, res.Workspaces, search)
			for _, w := range res.Workspaces {
				if seen[w.ID()] {
					t.Fatalf("list %+v: %s twice", in, w.ID())
				}
				seen[w.ID()] = true
			}
			if in.PageToken = res.NextPageToken; in.PageToken == "" {
				break
			}
		}
	})
}

// checkListed fails unless ws match search and are in list order.
func checkListed(t *testing.T, ws []*domain.Workspace, search string) {
	t.Helper()
	for i, w := range ws {
		if !strings.Contains(domain.NameKey(w.Name()), domain.NameKey(search)) {
			t.Fatalf("%q listed for the search %q", w.Name(), search)
		}
		if i > 0 {
			p := ws[i-1]
			if cmp.Or(strings.Compare(domain.NameKey(p.Name()), domain.NameKey(w.Name())), strings.Compare(p.ID(), w.ID())) >= 0 {
				t.Fatalf("%s (%q) listed after %s (%q)", w.ID(), w.Name(), p.ID(), p.Name())
			}
		}
	}
}
