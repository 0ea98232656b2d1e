package app_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/liveproctor/workspaces/pkg/fault"
	"github.com/liveproctor/workspaces/pkg/ident"
	"github.com/liveproctor/workspaces/services/workspace/internal/app"
	"github.com/liveproctor/workspaces/services/workspace/internal/app/apptest"
	"github.com/liveproctor/workspaces/services/workspace/internal/domain"
	portaldomain "github.com/liveproctor/workspaces/services/workspace/internal/portal/domain"
)

// A link is made by the workspace's own key pair or a manager's, leads
// below the public base URL, works 5 minutes, and its making is in the
// audit trail; any other workspace, and a deleted one, is not found.
func TestCreateLink(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	l, secret := f.link(f.root, "school")
	if !portaldomain.IsLinkID(l.ID) || !ident.IsSecret(secret) || !l.ExpiresAt.Equal(f.clock.Now().Add(5*time.Minute)) {
		t.Fatalf("link %+v", l)
	}
	f.link(f.school, "school")
	_, campus := apptest.CreateWorkspace(t, f.app, f.school, app.CreateInput{ID: "campus-2", Type: "CAMPUS"})
	for _, tc := range []struct {
		name     string
		caller   domain.Caller
		id       string
		wantKind fault.Kind
	}{
		{"a workspace it does not manage", campus, "school", fault.NotFound},
		{"an unknown workspace", f.root, "nowhere", fault.NotFound},
	} {
		_, err := f.portal.CreateLink(ctx, tc.caller, tc.id, "")
		if fault.KindOf(err) != tc.wantKind {
			t.Errorf("%s: %v, want %v", tc.name, err, tc.wantKind)
		}
	}
	_, err := f.portal.CreateLink(ctx, f.root, "school", "http://vendor.example/back")
	if e, ok := fault.As(err); !ok || e.Kind != fault.Invalid || e.Fields[0].Field != "returnUrl" {
		t.Errorf("an http returnUrl: %v, want Invalid naming returnUrl", err)
	}
	if _, err := f.app.DeleteWorkspace(ctx, f.root, "campus-2", app.Precondition{}); err != nil {
		t.Fatal(err)
	}
	if _, err := f.portal.CreateLink(ctx, f.root, "campus-2", ""); fault.KindOf(err) != fault.NotFound {
		t.Errorf("a deleted workspace: %v, want NotFound", err)
	}

	events := f.linkEvents("school")
	if len(events) != 2 || events[0].Type != domain.EventPortalLinkCreated || events[0].Target != (domain.Target{Type: "portalLink", ID: l.ID}) ||
		events[0].Actor != f.root.Actor() || events[0].RequestID != "req-root" {
		t.Fatalf("events %+v, want portalLink.created of %s by the root's key pair, then the school's", events, l.ID)
	}
}

// A workspace makes at most 50 links in a 5-minute window; the next is
// refused until the window ends, whoever asks, and another workspace's
// links are counted apart.
func TestCreateLinkBoundedPerWorkspace(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	f.clock.Advance(time.Minute) // a minute into the fixture's window
	for i := range portaldomain.LinksPerWindow {
		caller := f.root
		if i%2 == 1 {
			caller = f.school
		}
		if _, err := f.portal.CreateLink(ctx, caller, "school", ""); err != nil {
			t.Fatalf("link %d: %v", i+1, err)
		}
	}
	_, err := f.portal.CreateLink(ctx, f.root, "school", "")
	e, ok := fault.As(err)
	if !ok || e.Kind != fault.Throttled || e.RetryAfter != 4*time.Minute {
		t.Fatalf("link 51: %v, want Throttled until the window ends, in 4 minutes", err)
	}
	if _, err := f.portal.CreateLink(ctx, f.root, "root", ""); err != nil {
		t.Fatalf("another workspace's link: %v", err)
	}
	f.clock.Advance(4 * time.Minute)
	if _, err := f.portal.CreateLink(ctx, f.root, "school", ""); err != nil {
		t.Fatalf("a link in the next window: %v", err)
	}
	if n := len(f.linkEvents("school")); n != portaldomain.LinksPerWindow+1 {
		t.Errorf("%d portalLink.created events, want one per link made", n)
	}
}

// A link whose making cannot be recorded is withdrawn: the answer is
// Unavailable, with no link.
func TestCreateLinkWithdrawnWhenItsEventIsNotRecorded(t *testing.T) {
	f := newFixture(t)
	f.events.failing.Store(true)
	_, err := f.portal.CreateLink(context.Background(), f.root, "school", "")
	apptest.WantKind(t, err, fault.Unavailable)
	if len(f.linkEvents("school")) != 0 {
		t.Error("an event was recorded")
	}
}

// A link opens once, before it expires, into a session of an hour for its
// workspace, by the portal's actor; of openings at once, one wins.
func TestOpenLinkOnce(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	made, secret := f.link(f.root, "school")
	f.clock.Advance(4 * time.Minute)
	opened, err := f.portal.OpenLink(ctx, secret, "req-open")
	if err != nil {
		t.Fatal(err)
	}
	l := opened.Link
	if !ident.IsSecret(opened.Token) || opened.Token == secret || l.ID != made.ID || l.WorkspaceID != "school" ||
		l.ReturnURL != "https://vendor.example/back" || !l.SessionEnd().Equal(f.clock.Now().Add(time.Hour)) {
		t.Fatalf("opened %+v", opened)
	}
	if _, err := f.portal.OpenLink(ctx, secret, ""); !errors.Is(err, portaldomain.ErrLinkUnusable) {
		t.Errorf("a second opening: %v, want ErrLinkUnusable", err)
	}
	for _, bad := range []string{"", "not-a-secret", ident.NewSecret()} {
		if _, err := f.portal.OpenLink(ctx, bad, ""); !errors.Is(err, portaldomain.ErrLinkUnusable) {
			t.Errorf("opening %q: %v, want ErrLinkUnusable", bad, err)
		}
	}
	_, expired := f.link(f.root, "school")
	f.clock.Advance(5 * time.Minute)
	if _, err := f.portal.OpenLink(ctx, expired, ""); !errors.Is(err, portaldomain.ErrLinkUnusable) {
		t.Errorf("opening an expired link: %v, want ErrLinkUnusable", err)
	}

	_, raced := f.link(f.root, "school")
	var wins atomic.Int32
	var wg sync.WaitGroup
	for range 10 {
		wg.Go(func() {
			if _, err := f.portal.OpenLink(ctx, raced, ""); err == nil {
				wins.Add(1)
			} else if !errors.Is(err, portaldomain.ErrLinkUnusable) {
				t.Errorf("a losing opening: %v", err)
			}
		})
	}
	wg.Wait()
	if wins.Load() != 1 {
		t.Errorf("%d of 10 openings at once won, want 1", wins.Load())
	}

	var openings []domain.Event
	for _, e := range f.linkEvents("school") {
		if e.Type == domain.EventPortalLinkOpened {
			openings = append(openings, e)
		}
	}
	want := domain.Actor{WorkspaceID: "school", PortalLinkID: made.ID}
	if len(openings) != 2 || openings[0].Actor != want || openings[0].Target.ID != made.ID || openings[0].RequestID != "req-open" {
		t.Errorf("openings %+v, want the first by %+v", openings, want)
	}
}

// A session whose opening cannot be recorded is ended at once.
func TestOpenLinkEndsTheSessionWhenItsEventIsNotRecorded(t *testing.T) {
	f := newFixture(t)
	_, secret := f.link(f.root, "school")
	f.events.failing.Store(true)
	_, err := f.portal.OpenLink(context.Background(), secret, "")
	apptest.WantKind(t, err, fault.Unavailable)
	if e, _ := fault.As(err); !strings.Contains(e.Message, "new link") {
		t.Errorf("message %q does not ask for a new link", e.Message)
	}
}

// The session's token is checked on every call: the link's, opened, not
// revoked, not over; anything else is ErrSessionOver.
func TestSessionsCheck(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	opened := f.open()
	l, err := f.sessions.Check(ctx, opened.Token)
	if err != nil || l.ID != opened.Link.ID {
		t.Fatalf("Check = %+v, %v", l, err)
	}
	for _, bad := range []string{"", "x", ident.NewSecret()} {
		if _, err := f.sessions.Check(ctx, bad); !errors.Is(err, portaldomain.ErrSessionOver) {
			t.Errorf("Check(%q) = %v, want ErrSessionOver", bad, err)
		}
	}
	f.clock.Advance(time.Hour)
	if _, err := f.sessions.Check(ctx, opened.Token); !errors.Is(err, portaldomain.ErrSessionOver) {
		t.Errorf("Check after an hour = %v, want ErrSessionOver", err)
	}
}

// Revoking a link: an unused one no longer opens, an opened one's session
// ends at once; again, the same answer and one event; an unknown link,
// another workspace's, or one forgotten is not found.
func TestRevokeLink(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	unused, secret := f.link(f.root, "school")
	l, err := f.portal.RevokeLink(ctx, f.root, "school", unused.ID)
	if err != nil || l.Opened() || !l.RevokedAt.Equal(f.clock.Now()) {
		t.Fatalf("revoke an unused link = %+v, %v", l, err)
	}
	if _, err := f.portal.OpenLink(ctx, secret, ""); !errors.Is(err, portaldomain.ErrLinkUnusable) {
		t.Errorf("opening a revoked link: %v, want ErrLinkUnusable", err)
	}

	opened := f.open()
	if _, err := f.admit("GetWorkspace", opened.Token); err != nil {
		t.Fatal(err)
	}
	f.clock.Advance(time.Minute)
	l, err = f.portal.RevokeLink(ctx, f.school, "school", opened.Link.ID)
	if err != nil || !l.Opened() || !l.RevokedAt.Equal(f.clock.Now()) {
		t.Fatalf("revoke an opened link = %+v, %v", l, err)
	}
	if _, err := f.admit("GetWorkspace", opened.Token); !errors.Is(err, portaldomain.ErrSessionOver) {
		t.Errorf("a call of the revoked session: %v, want ErrSessionOver", err)
	}
	f.clock.Advance(time.Minute)
	again, err := f.portal.RevokeLink(ctx, f.root, "school", opened.Link.ID)
	if err != nil || again != l {
		t.Errorf("revoking again = %+v, %v; want the same answer %+v", again, err, l)
	}

	_, other := f.link(f.root, "school")
	otherWorkspace, _ := f.link(f.root, "campus")
	for name, tc := range map[string]struct{ id, linkID string }{
		"unknown":              {"school", "0f8e2c1a-3b4d-4e5f-8a9b-0c1d2e3f4a5b"},
		"not an id":            {"school", "../" + other},
		"another workspace's":  {"school", otherWorkspace.ID},
		"through another path": {"campus", opened.Link.ID},
	} {
		_, err := f.portal.RevokeLink(ctx, f.root, tc.id, tc.linkID)
		if fault.KindOf(err) != fault.NotFound {
			t.Errorf("%s: %v, want NotFound", name, err)
		}
	}
	f.clock.Advance(time.Hour)
	if _, err := f.portal.RevokeLink(ctx, f.root, "school", opened.Link.ID); fault.KindOf(err) != fault.NotFound {
		t.Errorf("revoking once the session's hour is over: %v, want NotFound", err)
	}

	var revocations []domain.Event
	for _, e := range f.linkEvents("school") {
		if e.Type == domain.EventPortalLinkRevoked {
			revocations = append(revocations, e)
		}
	}
	if len(revocations) != 2 || revocations[1].Target.ID != opened.Link.ID || revocations[1].Actor != f.school.Actor() {
		t.Errorf("revocations %+v, want one per link, the second by the school's key pair", revocations)
	}
}

// A revocation whose event cannot be recorded has ended the session all
// the same, and answers Unavailable; repeated, it records the event once.
func TestRevokeLinkRecordsItsEventWhenRepeated(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	opened := f.open()
	f.events.failing.Store(true)
	_, err := f.portal.RevokeLink(ctx, f.root, "school", opened.Link.ID)
	apptest.WantKind(t, err, fault.Unavailable)
	if _, err := f.sessions.Check(ctx, opened.Token); !errors.Is(err, portaldomain.ErrSessionOver) {
		t.Errorf("the session after a revocation answered Unavailable: %v, want it over", err)
	}
	f.events.failing.Store(false)
	for range 2 {
		if _, err := f.portal.RevokeLink(ctx, f.root, "school", opened.Link.ID); err != nil {
			t.Fatal(err)
		}
	}
	n := 0
	for _, e := range f.linkEvents("school") {
		if e.Type == domain.EventPortalLinkRevoked {
			n++
		}
	}
	if n != 1 {
		t.Errorf("%d revocation events, want 1", n)
	}
}

// In the portal, an administrator signs out by revoking the session's own
// link, which the audit trail shows as the portal's doing; no other link.
func TestSignOut(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	opened := f.open()
	caller, err := f.admit("RevokePortalLink", opened.Token)
	if err != nil {
		t.Fatal(err)
	}
	other, _ := f.link(f.root, "school")
	if _, err := f.portal.RevokeLink(ctx, caller, "school", other.ID); fault.KindOf(err) != fault.PermissionDenied {
		t.Errorf("revoking another link in the portal: %v, want PermissionDenied", err)
	}
	if _, err := f.portal.RevokeLink(ctx, caller, "campus", opened.Link.ID); fault.KindOf(err) != fault.NotFound {
		t.Errorf("revoking through a managed workspace in the portal: %v, want NotFound", err)
	}
	if _, err := f.portal.RevokeLink(ctx, caller, "school", opened.Link.ID); err != nil {
		t.Fatal(err)
	}
	events := f.linkEvents("school")
	last := events[len(events)-1]
	if last.Type != domain.EventPortalLinkRevoked || last.Actor != (domain.Actor{WorkspaceID: "school", PortalLinkID: opened.Link.ID}) {
		t.Errorf("last event %+v, want the revocation by the portal", last)
	}
	if _, err := f.admit("GetWorkspace", opened.Token); !errors.Is(err, portaldomain.ErrSessionOver) {
		t.Errorf("a call after signing out: %v, want ErrSessionOver", err)
	}
}

// Deleting the workspace ends its sessions and its unused links;
// undeleting it revives neither.
func TestDeletionEndsSessionsAndLinks(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	opened := f.open()
	_, unused := f.link(f.root, "school")
	_, secret := f.link(f.root, "school")
	f.clock.Advance(time.Second)
	if _, err := f.app.DeleteWorkspace(ctx, f.root, "school", app.Precondition{}); err != nil {
		t.Fatal(err)
	}
	if _, err := f.admit("GetWorkspace", opened.Token); !errors.Is(err, portaldomain.ErrSessionOver) {
		t.Errorf("a session of a deleted workspace: %v, want ErrSessionOver", err)
	}
	if _, err := f.portal.OpenLink(ctx, unused, ""); !errors.Is(err, portaldomain.ErrLinkUnusable) {
		t.Errorf("a link of a deleted workspace: %v, want ErrLinkUnusable", err)
	}
	f.clock.Advance(time.Second)
	if _, err := f.app.UndeleteWorkspace(ctx, f.root, "school"); err != nil {
		t.Fatal(err)
	}
	if _, err := f.admit("GetWorkspace", opened.Token); !errors.Is(err, portaldomain.ErrSessionOver) {
		t.Errorf("a session after the undelete: %v, want ErrSessionOver", err)
	}
	if _, err := f.portal.OpenLink(ctx, secret, ""); !errors.Is(err, portaldomain.ErrLinkUnusable) {
		t.Errorf("a link made before the delete, after the undelete: %v, want ErrLinkUnusable", err)
	}
	if opened := f.open(); opened.Token == "" {
		t.Error("a link made after the undelete does not open")
	}
}

// GetPortalSession answers the session the caller presents; a key pair
// has none.
func TestSession(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	opened := f.open()
	caller, err := f.admit("GetPortalSession", opened.Token)
	if err != nil {
		t.Fatal(err)
	}
	v, err := f.portal.Session(ctx, caller)
	l := v.Link
	if err != nil || l.ID != opened.Link.ID || l.WorkspaceID != "school" || !l.SessionEnd().Equal(opened.Link.SessionEnd()) ||
		l.ReturnURL != "https://vendor.example/back" || v.WorkspaceName == "" {
		t.Fatalf("Session = %+v, %v", v, err)
	}
	if _, err := f.portal.Session(ctx, f.root); fault.KindOf(err) != fault.PermissionDenied {
		t.Errorf("Session of a key pair: %v, want PermissionDenied", err)
	}
	// Revoked after the policy admitted the call: over.
	if _, err := f.portal.RevokeLink(ctx, f.root, "school", opened.Link.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := f.portal.Session(ctx, caller); !errors.Is(err, portaldomain.ErrSessionOver) {
		t.Errorf("Session once revoked: %v, want ErrSessionOver", err)
	}
}
