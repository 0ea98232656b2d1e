package app_test

import (
	"bytes"
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/liveproctor/workspaces/pkg/fault"
	"github.com/liveproctor/workspaces/services/workspace/internal/adapters/secretbox"
	"github.com/liveproctor/workspaces/services/workspace/internal/app"
	"github.com/liveproctor/workspaces/services/workspace/internal/domain"
	"github.com/liveproctor/workspaces/services/workspace/internal/lti/adapters/ltistate"
	ltiapp "github.com/liveproctor/workspaces/services/workspace/internal/lti/app"
	ltidomain "github.com/liveproctor/workspaces/services/workspace/internal/lti/domain"
)

const (
	membershipsURL = "https://lms.test/courses/7/members?type=x"
	instructorRole = "http://purl.imsglobal.org/vocab/lis/v2/membership#Instructor"
)

// grantor is a token endpoint that grants tok-1, tok-2, … and counts them.
type grantor struct {
	mu     sync.Mutex
	grants int
}

func (g *grantor) Grant(context.Context, string, string, string) (ltiapp.GrantedToken, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.grants++
	return ltiapp.GrantedToken{AccessToken: fmt.Sprintf("tok-%d", g.grants)}, nil
}

type fixedAssertion struct{}

func (fixedAssertion) Sign(context.Context, any) (string, error) { return "assertion", nil }

// nrps serves pages by URL, refusing the tokens in refused, and records
// every URL asked.
type nrps struct {
	mu      sync.Mutex
	pages   map[string]ltiapp.MembersPage
	refused map[string]bool
	asked   []string
}

func (n *nrps) Members(_ context.Context, pageURL, token string) (ltiapp.MembersPage, error) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.asked = append(n.asked, pageURL)
	if n.refused[token] {
		return ltiapp.MembersPage{}, ltiapp.ErrTokenRefused
	}
	p, ok := n.pages[pageURL]
	if !ok {
		return ltiapp.MembersPage{}, fault.New(fault.BadGateway, "no page %s", pageURL)
	}
	return p, nil
}

// rosterFixture is a workspace with a registration, two launches of an
// instructor (a, b) and one of a learner, and a platform whose roster is
// ten members over pages of 4, 4 and 2.
type rosterFixture struct {
	roster   *ltiapp.Roster
	platform *nrps
	tokens   *grantor
	caller   domain.Caller
}

func newRosterFixture(t *testing.T) *rosterFixture {
	t.Helper()
	records := &memoryLaunches{}
	f := newFixture(t, deps{records: records})
	ctx := context.Background()
	_, self := f.create(f.root, app.CreateInput{ID: "w"})
	in := canvas("100", "1:a")
	tokenURL := "https://sso.canvaslms.com/login/oauth2/token"
	in.AuthTokenURL = &tokenURL
	reg, err := f.regs.Create(ctx, self, "w", in)
	if err != nil {
		t.Fatal(err)
	}
	for id, role := range map[string]string{"a": instructorRole, "b": instructorRole, "l": "http://purl.imsglobal.org/vocab/lis/v2/membership#Learner"} {
		_ = records.Put(ctx, ltiapp.LTI13LaunchRecord{
			ID: launchID(id), WorkspaceID: "w", RegistrationID: reg.ID, Roles: []string{role},
			Services: ltidomain.LTI13Services{MembershipsURL: membershipsURL},
		})
	}
	var members []ltiapp.Member
	for i := range 10 {
		members = append(members, ltiapp.Member{UserID: fmt.Sprintf("u%d", i), Status: "Active"})
	}
	page2 := "https://LMS.test/Courses/7/Members?Page=2&Cursor=Ab%2Fc"
	page3 := "https://lms.test/courses/7/members/P3"
	p := &nrps{refused: map[string]bool{}, pages: map[string]ltiapp.MembersPage{
		membershipsURL + "&limit=3":   {Members: members[:4], Next: page2},
		membershipsURL + "&limit=100": {Members: members[:4], Next: page2},
		page2:                         {Members: members[4:8], Next: page3},
		page3:                         {Members: members[8:]},
	}}
	g := &grantor{}
	tokens := ltiapp.NewPlatformTokens(g, ltistate.NewMemoryPlatformTokens(10, nil), fixedAssertion{}, 0, ltiapp.Settings{})
	box, err := secretbox.New(bytes.Repeat([]byte{3}, 32), bytes.Repeat([]byte{4}, 32))
	if err != nil {
		t.Fatal(err)
	}
	return &rosterFixture{roster: ltiapp.NewRoster(app.NewLTIPort(f.app), records, tokens, p, box), platform: p, tokens: g, caller: self}
}

// launchID is a launch id of the shape launches are given, from a letter.
func launchID(c string) string { return strings.Repeat(c, 43) }

func (r *rosterFixture) page(launch string, q ltiapp.MembersQuery) ([]string, string, error) {
	members, next, err := r.roster.Members(context.Background(), r.caller, "w", launchID(launch), q)
	var ids []string
	for _, m := range members {
		ids = append(ids, m.UserID)
	}
	return ids, next, err
}

// Pages of three over the platform's pages of four, four and two: every
// member once, in order, the platform's split pages read again where they
// were left, its next URLs as given.
func TestRosterPagesOverThePlatformsPages(t *testing.T) {
	r := newRosterFixture(t)
	var all []string
	q := ltiapp.MembersQuery{PageSize: 3}
	for pages := 1; ; pages++ {
		ids, next, err := r.page("a", q)
		if err != nil {
			t.Fatal(err)
		}
		if len(ids) > 3 || pages > 4 {
			t.Fatalf("page %d: %v", pages, ids)
		}
		all = append(all, ids...)
		if next == "" {
			break
		}
		q.PageToken = next
	}
	if want := []string{"u0", "u1", "u2", "u3", "u4", "u5", "u6", "u7", "u8", "u9"}; !slices.Equal(all, want) {
		t.Fatalf("the roster: %v", all)
	}
	if !slices.Contains(r.platform.asked, "https://LMS.test/Courses/7/Members?Page=2&Cursor=Ab%2Fc") {
		t.Fatalf("the next link was not followed as given: %v", r.platform.asked)
	}
	if r.tokens.grants != 1 {
		t.Fatalf("%d tokens granted, want one shared", r.tokens.grants)
	}
}

// A page token is for its launch and role only, and cannot be altered.
func TestRosterPageTokensAreSealedForTheirLaunch(t *testing.T) {
	r := newRosterFixture(t)
	_, next, err := r.page("a", ltiapp.MembersQuery{PageSize: 3})
	if err != nil || next == "" {
		t.Fatalf("first page: %q, %v", next, err)
	}
	tampered := []byte(next)
	tampered[10] ^= 1
	for name, q := range map[string]struct {
		launch string
		q      ltiapp.MembersQuery
	}{
		"another launch's": {"b", ltiapp.MembersQuery{PageToken: next}},
		"another role":     {"a", ltiapp.MembersQuery{PageToken: next, Role: "Learner"}},
		"altered":          {"a", ltiapp.MembersQuery{PageToken: string(tampered)}},
		"not a token":      {"a", ltiapp.MembersQuery{PageToken: membershipsURL}},
		"a page too large": {"a", ltiapp.MembersQuery{PageSize: 501}},
		"a role too long":  {"a", ltiapp.MembersQuery{Role: strings.Repeat("r", 257)}},
	} {
		if _, _, err := r.page(q.launch, q.q); fault.KindOf(err) != fault.Invalid {
			t.Errorf("%s: %v, want Invalid", name, err)
		}
	}
}

// A learner's launch is refused; a next link to another host is not
// followed; a refused token is dropped and one new one tried, once.
func TestRosterRefusals(t *testing.T) {
	r := newRosterFixture(t)
	if _, _, err := r.page("l", ltiapp.MembersQuery{}); fault.KindOf(err) != fault.PermissionDenied {
		t.Fatalf("a learner's launch: %v", err)
	}

	r.platform.refused["tok-1"] = true
	if ids, _, err := r.page("a", ltiapp.MembersQuery{}); err != nil || len(ids) != 10 || r.tokens.grants != 2 {
		t.Fatalf("after a 401: %v, %v; %d grants", ids, err, r.tokens.grants)
	}
	r.platform.refused["tok-2"], r.platform.refused["tok-3"] = true, true
	if _, _, err := r.page("a", ltiapp.MembersQuery{}); fault.KindOf(err) != fault.BadGateway || r.tokens.grants != 3 {
		t.Fatalf("refused twice: %v; %d grants", err, r.tokens.grants)
	}
	delete(r.platform.refused, "tok-3")

	first := r.platform.pages[membershipsURL+"&limit=100"]
	first.Next = "https://attacker.test/members"
	r.platform.pages[membershipsURL+"&limit=100"] = first
	if _, _, err := r.page("a", ltiapp.MembersQuery{}); fault.KindOf(err) != fault.BadGateway || slices.Contains(r.platform.asked, first.Next) {
		t.Fatalf("a next link elsewhere: %v, asked %v", err, r.platform.asked)
	}
}
