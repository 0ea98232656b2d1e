package app_test

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/liveproctor/workspaces/services/workspace/internal/adapters/memstore"
	"github.com/liveproctor/workspaces/services/workspace/internal/adapters/secretbox"
	"github.com/liveproctor/workspaces/services/workspace/internal/app"
	"github.com/liveproctor/workspaces/services/workspace/internal/app/apptest"
	"github.com/liveproctor/workspaces/services/workspace/internal/domain"
	ltidomain "github.com/liveproctor/workspaces/services/workspace/internal/lti/domain"
	"github.com/liveproctor/workspaces/services/workspace/internal/portal/adapters/portalstate"
	portalapp "github.com/liveproctor/workspaces/services/workspace/internal/portal/app"
)

const (
	rootKey    = "00000000-0000-4000-8000-000000000001"
	rootSecret = "00000000-0000-4000-8000-000000000002"
	baseURL    = "https://proctor.test"
)

// clock is a test clock.
type clock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *clock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

// events is the audit trail over a memory store, which refuses appends
// while failing is set.
type events struct {
	*memstore.Repository
	failing atomic.Bool
}

func (e *events) AppendEvent(ctx context.Context, ev domain.Event, newID func() string) error {
	if e.failing.Load() {
		return errors.New("the audit trail is down")
	}
	return e.Repository.AppendEvent(ctx, ev, newID)
}

// fixture is the workspace application over a memory store, bootstrapped
// with a root workspace that made "school" (which made "campus"), whose
// policy admits portal sessions, and the portal's use cases over it, with
// a memory store of links, all on one clock.
type fixture struct {
	t        *testing.T
	app      *app.App
	repo     *memstore.Repository
	events   *events
	clock    *clock
	root     domain.Caller
	school   domain.Caller // the server key pair of "school"
	portal   *portalapp.Portal
	sessions *portalapp.Sessions
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	repo := memstore.New()
	c := &clock{now: time.Date(2026, 11, 29, 9, 0, 0, 0, time.UTC)}
	box, err := secretbox.New(bytes.Repeat([]byte{1}, 32), bytes.Repeat([]byte{2}, 32))
	if err != nil {
		t.Fatal(err)
	}
	store := portalstate.NewMemoryStore(1000, c.Now)
	settings := portalapp.Settings{BaseURL: baseURL, Now: c.Now}
	sessions := portalapp.NewSessions(store, settings)
	ev := &events{Repository: repo}
	a := app.New(repo, box, app.Settings{LTIToolURLs: ltidomain.NewToolURLs(baseURL)},
		app.WithClock(c.Now), app.WithEventLog(ev, app.EventSettings{}), app.WithPortalSessions(sessions))
	ctx := context.Background()
	if _, err := a.Bootstrap(ctx, app.BootstrapConfig{WorkspaceID: "root", Name: "Root", AppKey: rootKey, AppSecret: rootSecret}); err != nil {
		t.Fatal(err)
	}
	root, err := a.Authenticate(ctx, rootKey, rootSecret)
	if err != nil {
		t.Fatal(err)
	}
	root.RequestID = "req-root"
	f := &fixture{t: t, app: a, repo: repo, events: ev, clock: c, root: root, sessions: sessions,
		portal: portalapp.New(app.NewPortalPort(a), store, settings)}
	_, f.school = apptest.CreateWorkspace(t, a, root, app.CreateInput{ID: "school"})
	apptest.CreateWorkspace(t, a, f.school, app.CreateInput{ID: "campus", Type: "CAMPUS"})
	return f
}

// link makes a link to the portal of id as caller and returns it with its
// secret.
func (f *fixture) link(caller domain.Caller, id string) (portalapp.NewLink, string) {
	f.t.Helper()
	l, err := f.portal.CreateLink(context.Background(), caller, id, "https://vendor.example/back")
	if err != nil {
		f.t.Fatal(err)
	}
	return l, secretOf(f.t, l.URL)
}

// secretOf is the secret at the end of a link's URL.
func secretOf(t *testing.T, url string) string {
	t.Helper()
	secret, ok := strings.CutPrefix(url, baseURL+"/portal/open/")
	if !ok {
		t.Fatalf("link URL %q is not below %s/portal/open/", url, baseURL)
	}
	return secret
}

// open opens a new link to the portal of "school" and returns the session.
func (f *fixture) open() portalapp.Opened {
	f.t.Helper()
	_, secret := f.link(f.root, "school")
	opened, err := f.portal.OpenLink(context.Background(), secret, "req-open")
	if err != nil {
		f.t.Fatal(err)
	}
	return opened
}

// admit is the workspace service's policy admitting a call of operation
// with a portal session's token.
func (f *fixture) admit(operation, token string) (domain.Caller, error) {
	return f.app.Admit(context.Background(), operation, app.Credentials{PortalSession: token})
}

// linkEvents are the audit trail's events about portal links of
// workspace, oldest first.
func (f *fixture) linkEvents(workspace string) []domain.Event {
	f.t.Helper()
	all, err := f.repo.ListEvents(context.Background(), domain.EventQuery{WorkspaceID: workspace, Limit: 1000,
		Types: []domain.EventType{domain.EventPortalLinkCreated, domain.EventPortalLinkOpened, domain.EventPortalLinkRevoked}})
	if err != nil {
		f.t.Fatal(err)
	}
	return all
}
