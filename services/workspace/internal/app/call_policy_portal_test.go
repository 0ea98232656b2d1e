package app_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/liveproctor/workspaces/pkg/fault"
	workspacev1 "github.com/liveproctor/workspaces/pkg/gen/workspace/v1"
	"github.com/liveproctor/workspaces/pkg/ident"
	"github.com/liveproctor/workspaces/services/workspace/internal/adapters/memstore"
	"github.com/liveproctor/workspaces/services/workspace/internal/app"
	"github.com/liveproctor/workspaces/services/workspace/internal/app/apptest"
	"github.com/liveproctor/workspaces/services/workspace/internal/domain"
	"github.com/liveproctor/workspaces/services/workspace/internal/portal/adapters/portalstate"
	portalapp "github.com/liveproctor/workspaces/services/workspace/internal/portal/app"
)

// portalFixture is the fixture with its audit trail and portal sessions
// admitted, and the portal's use cases over it (in memory).
type portalFixture struct {
	*fixture
	repo   *memstore.Repository
	portal *portalapp.Portal
}

func newPortalFixture(t *testing.T, opts ...app.Option) *portalFixture {
	t.Helper()
	repo, store := memstore.New(), portalstate.NewMemoryStore(100, nil)
	f := newFixtureOn(t, repo, append(opts, app.WithEventLog(repo, app.EventSettings{}),
		app.WithPortalSessions(portalapp.NewSessions(store, portalapp.Settings{})))...)
	return &portalFixture{fixture: f, repo: repo,
		portal: portalapp.New(app.NewPortalPort(f.app), store, portalapp.Settings{BaseURL: "https://lti.test"})}
}

// session opens a new link to the portal of id, made as caller, and
// returns the session's token and link id.
func (f *portalFixture) session(caller domain.Caller, id string) (token, linkID string) {
	f.t.Helper()
	ctx := context.Background()
	l, err := f.portal.CreateLink(ctx, caller, id, "")
	if err != nil {
		f.t.Fatal(err)
	}
	opened, err := f.portal.OpenLink(ctx, l.URL[strings.LastIndexByte(l.URL, '/')+1:], "")
	if err != nil {
		f.t.Fatal(err)
	}
	return opened.Token, l.ID
}

// The operations a portal session may call are those the portal's pages
// need, for their workspace; GetPortalSession is the session's own.
func TestPortalCallableOperations(t *testing.T) {
	f := newPortalFixture(t)
	f.create(f.root, app.CreateInput{ID: "school"})
	token, _ := f.session(f.root, "school")
	want := []string{
		"AddLtiDeployment", "CreateLtiRegistration", "CreateLtiRegistrationLink", "DeleteLtiRegistration",
		"GetLtiRegistration", "GetPortalSession", "GetWorkspace", "ListLtiRegistrations", "ListWorkspaceEvents",
		"ListWorkspaceKeys", "RemoveLtiDeployment", "RevokePortalLink", "RevokeWorkspaceKey", "RotateWorkspaceKey",
	}
	var admitted []string
	for _, m := range workspacev1.WorkspaceService_ServiceDesc.Methods {
		caller, err := f.app.Admit(context.Background(), m.MethodName, app.Credentials{PortalSession: token})
		switch e, _ := fault.As(err); {
		case err == nil && caller.WorkspaceID == "school" && caller.InPortal():
			admitted = append(admitted, m.MethodName)
		case err == nil && caller.WorkspaceID == "":
			// a public operation: no caller
		case e == nil || e.Kind != fault.PermissionDenied || !strings.Contains(e.Message, m.MethodName):
			t.Errorf("%s with a portal session: %+v, %v; want PermissionDenied naming it", m.MethodName, caller, err)
		}
	}
	slices.Sort(admitted)
	if !slices.Equal(admitted, want) {
		t.Errorf("a portal session may call %q, want %q", admitted, want)
	}
}

// A portal session goes through the policy's steps: the address's
// failures, the session (a failure counted against the address), the
// operation's rule, and the rate under a key of its own and its
// workspace's limit.
func TestAdmitPortalSessions(t *testing.T) {
	limits := &recordingLimits{}
	f := newPortalFixture(t, app.WithLimits(limits))
	_, school := f.create(f.root, app.CreateInput{ID: "school", RateLimit: &domain.RateLimit{PerSecond: 5, Burst: 7}})
	token, linkID := f.session(school, "school")
	rootCreds := app.Credentials{AppKey: rootKey, AppSecret: rootSecret}
	for _, tc := range []struct {
		name      string
		op        string
		creds     app.Credentials
		refuse    bool // the address's failures
		wantKind  fault.Kind
		wantSteps []string
	}{
		{name: "admitted", op: "ListWorkspaceKeys", creds: app.Credentials{PortalSession: token},
			wantSteps: []string{"check portal-session", fmt.Sprintf("limit portal:%s 5/7", linkID)}},
		{name: "its own operation", op: "GetPortalSession", creds: app.Credentials{PortalSession: token},
			wantSteps: []string{"check portal-session", fmt.Sprintf("limit portal:%s 5/7", linkID)}},
		{name: "not the portal's", op: "ListWorkspaces", creds: app.Credentials{PortalSession: token},
			wantKind: fault.PermissionDenied, wantSteps: []string{"check portal-session"}},
		{name: "unknown session, counted", op: "GetWorkspace", creds: app.Credentials{PortalSession: ident.NewSecret()},
			wantKind: fault.Unauthenticated, wantSteps: []string{"check portal-session", "failed portal-session"}},
		{name: "address refused before the session", op: "GetWorkspace", creds: app.Credentials{PortalSession: token}, refuse: true,
			wantKind: fault.Throttled, wantSteps: []string{"check portal-session"}},
		{name: "both credentials", op: "GetWorkspace",
			creds:    app.Credentials{AppKey: rootKey, AppSecret: rootSecret, PortalSession: token},
			wantKind: fault.Invalid},
		{name: "a key pair on the session's operation", op: "GetPortalSession", creds: rootCreds,
			wantKind: fault.PermissionDenied, wantSteps: []string{"check " + rootKey}},
		{name: "nothing on the session's operation", op: "GetPortalSession", wantKind: fault.Unauthenticated},
		{name: "public: the session not looked at", op: "OpenPortalLink", creds: app.Credentials{PortalSession: "x"},
			wantSteps: []string{"anonymous"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			*limits = recordingLimits{refuseCheck: tc.refuse}
			caller, err := f.app.Admit(context.Background(), tc.op, tc.creds)
			if tc.wantKind != fault.Internal {
				apptest.WantKind(t, err, tc.wantKind)
			} else if err != nil {
				t.Fatal(err)
			} else if tc.op != "OpenPortalLink" && (caller.WorkspaceID != "school" || caller.PortalLinkID != linkID || !caller.RESTAccess) {
				t.Errorf("caller %+v, want the school's portal session", caller)
			}
			if !slices.Equal(limits.steps, tc.wantSteps) {
				t.Errorf("steps %q, want %q", limits.steps, tc.wantSteps)
			}
		})
	}
	if _, err := f.app.Admit(context.Background(), "GetPortalSession", app.Credentials{}); !strings.Contains(err.Error(), "portal-session") {
		t.Errorf("no credentials on GetPortalSession: %v, want the portal-session metadata named", err)
	}
}

// In the portal an administrator sees and changes its own workspace only:
// never those it manages, which are not found as any other.
func TestPortalCallerReachesItsOwnWorkspaceOnly(t *testing.T) {
	f := newPortalFixture(t)
	ctx := context.Background()
	_, school := f.create(f.root, app.CreateInput{ID: "school"})
	res, _ := f.create(school, app.CreateInput{ID: "campus", Type: "CAMPUS"})
	token, linkID := f.session(f.root, "school")
	caller, err := f.app.Admit(ctx, "GetWorkspace", app.Credentials{PortalSession: token})
	if err != nil {
		t.Fatal(err)
	}
	if w, err := f.app.GetWorkspace(ctx, caller, "school"); err != nil || w.ID() != "school" {
		t.Fatalf("its own workspace: %v", err)
	}
	for name, err := range map[string]error{
		"get a managed workspace":  second(f.app.GetWorkspace(ctx, caller, "campus")),
		"list its keys":            second(f.app.ListWorkspaceKeys(ctx, caller, "campus")),
		"its audit trail":          second(f.app.ListWorkspaceEvents(ctx, caller, app.EventsInput{WorkspaceID: "campus"})),
		"rotate its key":           second(f.app.RotateWorkspaceKey(ctx, caller, "campus", res.Server.ConsumerKey, nil)),
		"delete it":                second(f.app.DeleteWorkspace(ctx, caller, "campus", app.Precondition{})),
		"get the root":             second(f.app.GetWorkspace(ctx, caller, "root")),
		"registrations of another": second(app.NewLTIPort(f.app).Managed(ctx, caller, "campus")),
	} {
		if fault.KindOf(err) != fault.NotFound {
			t.Errorf("%s in the portal: %v, want NotFound", name, err)
		}
	}
	_, err = f.app.ListWorkspaceEvents(ctx, caller, app.EventsInput{WorkspaceID: "school", IncludeManaged: true})
	apptest.WantKind(t, err, fault.PermissionDenied)
	if app.NewLTIPort(f.app).IsRoot(domain.Caller{WorkspaceID: "root", PortalLinkID: linkID}) {
		t.Error("a portal session of the root workspace verifies LTI launches")
	}

	// Its changes are the portal's: the actor names the link.
	keys, err := f.app.ListWorkspaceKeys(ctx, caller, "school")
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range keys {
		if k.AppSecret != "" {
			t.Errorf("the portal's list shows the secret of %s", k.AppKey)
		}
	}
	rotated, err := f.app.RotateWorkspaceKey(ctx, caller, "school", keys[0].AppKey, nil)
	if err != nil {
		t.Fatal(err)
	}
	if rotated.Successor.AppSecret == "" {
		t.Error("a rotation in the portal does not show its new secret")
	}
	rotations, err := f.repo.ListEvents(ctx, domain.EventQuery{WorkspaceID: "school", Types: []domain.EventType{domain.EventKeyPairRotated}, Limit: 10})
	if err != nil {
		t.Fatal(err)
	}
	if want := (domain.Actor{WorkspaceID: "school", PortalLinkID: linkID}); len(rotations) != 1 || rotations[0].Actor != want {
		t.Errorf("rotations %+v, want one by %+v", rotations, want)
	}
}

func second[T any](_ T, err error) error { return err }
