package mongostore_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/liveproctor/workspaces/pkg/fault"
	"github.com/liveproctor/workspaces/pkg/testenv"
	"github.com/liveproctor/workspaces/services/workspace/internal/adapters/mongostore"
	"github.com/liveproctor/workspaces/services/workspace/internal/adapters/secretbox"
	"github.com/liveproctor/workspaces/services/workspace/internal/app"
	"github.com/liveproctor/workspaces/services/workspace/internal/domain"
	ltidomain "github.com/liveproctor/workspaces/services/workspace/internal/lti/domain"
	webhookdomain "github.com/liveproctor/workspaces/services/workspace/internal/webhook/domain"
)

// clock is a test clock the app stamps events with; settle is the default
// 2 s, and tests move the clock past it instead of waiting.
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

const settle = 2 * time.Second

// pastSettle moves the clock past the settle window of everything so far.
const pastSettle = settle + time.Millisecond

type eventsFixture struct {
	t     *testing.T
	app   *app.App
	repo  *mongostore.Repository
	db    string // the repository's database
	clock *clock
	root  domain.Caller
}

// newEventsFixture is an app over a fresh database of the shared FerretDB,
// publishing through log (the repository itself when nil), with the root
// bootstrapped.
func newEventsFixture(t *testing.T, wrap func(*mongostore.Repository) app.EventLog) *eventsFixture {
	t.Helper()
	c := &clock{now: time.Now().UTC().Truncate(time.Millisecond)}
	repo, db := newRepositoryIn(t, mongostore.WithClock(c.Now))
	var log app.EventLog = repo
	if wrap != nil {
		log = wrap(repo)
	}
	box, err := secretbox.New(bytes.Repeat([]byte{1}, 32), bytes.Repeat([]byte{2}, 32))
	if err != nil {
		t.Fatal(err)
	}
	a := app.New(repo, box, app.Settings{LTIToolURLs: ltidomain.NewToolURLs("https://lti.test")},
		app.WithClock(c.Now), app.WithEventLog(log, app.EventSettings{Settle: settle}))
	ctx := context.Background()
	const key, secret = "00000000-0000-4000-8000-000000000001", "00000000-0000-4000-8000-000000000002"
	if _, err := a.Bootstrap(ctx, app.BootstrapConfig{WorkspaceID: "root", Name: "Root", AppKey: key, AppSecret: secret}); err != nil {
		t.Fatal(err)
	}
	root, err := a.Authenticate(ctx, key, secret)
	if err != nil {
		t.Fatal(err)
	}
	root.RequestID = "req-root"
	return &eventsFixture{t: t, app: a, repo: repo, db: db, clock: c, root: root}
}

func (f *eventsFixture) create(id string) error {
	f.clock.Advance(time.Millisecond)
	_, err := f.app.CreateWorkspace(context.Background(), f.root, app.CreateInput{ID: id, Name: "Workspace " + id, Type: "DISTRICT"})
	return err
}

// list reads one page of id's events as the root, after the settle window
// of everything so far has passed.
func (f *eventsFixture) list(in app.EventsInput) app.EventsResult {
	f.t.Helper()
	res, err := f.app.ListWorkspaceEvents(context.Background(), f.root, in)
	if err != nil {
		f.t.Fatalf("list events: %v", err)
	}
	return res
}

func types(events []domain.Event) []string {
	out := make([]string, len(events))
	for i, e := range events {
		out[i] = string(e.Type)
	}
	return out
}

func wantTypes(t *testing.T, what string, got []domain.Event, want ...string) {
	t.Helper()
	if !slices.Equal(types(got), want) {
		t.Fatalf("%s: event types = %v, want %v", what, types(got), want)
	}
}

// A sequence of changes reads back in order, page by page with the cursor;
// polling with the kept token returns only newer events.
func TestEventsReadBackInOrderAndPoll(t *testing.T) {
	f := newEventsFixture(t, nil)
	ctx := context.Background()
	if err := f.create("a"); err != nil {
		t.Fatal(err)
	}
	name := "Renamed"
	f.clock.Advance(time.Millisecond)
	if _, err := f.app.UpdateWorkspace(ctx, f.root, app.UpdateInput{ID: "a", Changes: domain.Changes{Name: &name}}); err != nil {
		t.Fatal(err)
	}
	f.clock.Advance(time.Millisecond)
	if _, err := f.app.DeleteWorkspace(ctx, f.root, "a", app.Precondition{}); err != nil {
		t.Fatal(err)
	}
	f.clock.Advance(time.Millisecond)
	if _, err := f.app.UndeleteWorkspace(ctx, f.root, "a"); err != nil {
		t.Fatal(err)
	}

	// Nothing is listed within the settle window; the token stays at the start.
	first := f.list(app.EventsInput{WorkspaceID: "a"})
	wantTypes(t, "within the settle window", first.Events)
	if first.NextPageToken == "" {
		t.Fatal("an empty page has no nextPageToken")
	}

	f.clock.Advance(pastSettle)
	size := int32(3)
	page := f.list(app.EventsInput{WorkspaceID: "a", PageSize: &size, PageToken: first.NextPageToken})
	wantTypes(t, "first page", page.Events, "workspace.created", "workspace.updated", "workspace.deleted")
	page2 := f.list(app.EventsInput{WorkspaceID: "a", PageSize: &size, PageToken: page.NextPageToken})
	wantTypes(t, "second page", page2.Events, "workspace.undeleted")
	all := append(page.Events, page2.Events...)
	for i, e := range all {
		if e.WorkspaceID != "a" || e.Target != (domain.Target{Type: "workspace", ID: "a"}) ||
			e.Actor != (domain.Actor{WorkspaceID: "root", AppKey: f.root.AppKey}) || e.RequestID != "req-root" {
			t.Errorf("event %d = %+v: want workspace a, actor root's pair, request req-root", i, e)
		}
		if i > 0 && all[i-1].ID >= e.ID {
			t.Errorf("ids out of order: %s then %s", all[i-1].ID, e.ID)
		}
	}
	if got := all[1].ChangedFields; !slices.Equal(got, []string{"name"}) {
		t.Errorf("update's changed fields = %v, want [name]", got)
	}

	// Polling with the kept token: nothing new, and the token stays usable.
	kept := page2.NextPageToken
	again := f.list(app.EventsInput{WorkspaceID: "a", PageSize: &size, PageToken: kept})
	wantTypes(t, "poll with nothing new", again.Events)
	if again.NextPageToken != kept {
		t.Fatalf("an empty page moved the token: %q, want %q", again.NextPageToken, kept)
	}
	f.clock.Advance(time.Millisecond)
	if _, err := f.app.DeleteWorkspace(ctx, f.root, "a", app.Precondition{}); err != nil {
		t.Fatal(err)
	}
	f.clock.Advance(pastSettle)
	newer := f.list(app.EventsInput{WorkspaceID: "a", PageSize: &size, PageToken: kept})
	wantTypes(t, "poll after one more change", newer.Events, "workspace.deleted")

	// The root's own trail starts with its bootstrap, by the system; with
	// includeManaged it holds a's events too; type filters.
	rootOwn := f.list(app.EventsInput{WorkspaceID: "root"})
	wantTypes(t, "root", rootOwn.Events, "workspace.bootstrapped")
	if !rootOwn.Events[0].Actor.System {
		t.Errorf("bootstrap actor = %+v, want the system", rootOwn.Events[0].Actor)
	}
	managed := f.list(app.EventsInput{WorkspaceID: "root", IncludeManaged: true})
	wantTypes(t, "root with managed", managed.Events, "workspace.bootstrapped", "workspace.created", "workspace.updated",
		"workspace.deleted", "workspace.undeleted", "workspace.deleted")
	deletes := f.list(app.EventsInput{WorkspaceID: "root", IncludeManaged: true, Types: []string{"workspace.deleted"}})
	wantTypes(t, "type filter", deletes.Events, "workspace.deleted", "workspace.deleted")

	// A token is bound to its list.
	_, err := f.app.ListWorkspaceEvents(ctx, f.root, app.EventsInput{WorkspaceID: "root", PageToken: kept})
	if fault.KindOf(err) != fault.Invalid {
		t.Fatalf("a's token on root's list: error = %v, want Invalid", err)
	}
}

// What only some event types carry (a webhook's disabling reason, the event
// whose attempts ran out) is stored in the outbox and in the trail, and
// read back; the other events carry none.
func TestEventsKeepAReasonAndAnEventID(t *testing.T) {
	f := newEventsFixture(t, nil)
	ctx := context.Background()
	if err := f.create("a"); err != nil {
		t.Fatal(err)
	}
	w, err := f.repo.Get(ctx, "a")
	if err != nil {
		t.Fatal(err)
	}
	now := f.clock.Now()
	if _, err := w.AddWebhook("wh-1", webhookdomain.NewEndpoint{URL: "https://hooks.example.com/"}, []byte("sealed"), domain.WebhookURLPolicy{}, now); err != nil {
		t.Fatal(err)
	}
	if _, err := w.DisableWebhook("wh-1", "the endpoint answered 410 Gone", now); err != nil {
		t.Fatal(err)
	}
	if err := w.RecordWebhookAttemptsExhausted("wh-1", "0190b2a4c5d6e7f8a9b0c1d2e3f4", now); err != nil {
		t.Fatal(err)
	}
	w.Attribute(domain.SystemActor, "")
	if _, err := f.repo.Update(ctx, w); err != nil {
		t.Fatal(err)
	}
	f.clock.Advance(pastSettle)
	if err := f.app.RelayOnce(ctx); err != nil {
		t.Fatal(err)
	}
	f.clock.Advance(pastSettle)
	got := f.list(app.EventsInput{WorkspaceID: "a", Types: []string{"webhook.created", "webhook.disabled", "webhook.attemptsExhausted"}}).Events
	wantTypes(t, "webhook events", got, "webhook.created", "webhook.disabled", "webhook.attemptsExhausted")
	if got[0].Reason != "" || got[0].EventID != "" || got[1].Reason != "the endpoint answered 410 Gone" || got[1].EventID != "" ||
		got[2].EventID != "0190b2a4c5d6e7f8a9b0c1d2e3f4" || got[2].Reason != "" {
		t.Fatalf("events as stored: %+v", got)
	}
}

// A change made in the administrator's portal keeps its actor (the link
// with its workspace), in the outbox and in the trail, and so does an
// event that rides on no write; such an event, recorded again under its
// own key (a repeated revocation), is stored once.
func TestEventsKeepThePortalActor(t *testing.T) {
	f := newEventsFixture(t, nil)
	ctx := context.Background()
	if err := f.create("a"); err != nil {
		t.Fatal(err)
	}
	w, err := f.repo.Get(ctx, "a")
	if err != nil {
		t.Fatal(err)
	}
	now := f.clock.Now()
	portal := domain.Actor{WorkspaceID: "a", PortalLinkID: "0f8e2c1a-3b4d-4e5f-8a9b-0c1d2e3f4a5b"}
	w.RecordChange(domain.EventKeyPairRotated, domain.Target{Type: domain.TargetKeyPair, ID: "k"}, now, nil)
	w.Attribute(portal, "req-portal")
	if _, err := f.repo.Update(ctx, w); err != nil {
		t.Fatal(err)
	}
	revoked := domain.NewEvent(domain.EventPortalLinkRevoked, w, portal,
		domain.Target{Type: domain.TargetPortalLink, ID: portal.PortalLinkID}, "req-sign-out", now)
	revoked.Key = "a/portalLink/" + portal.PortalLinkID + "/portalLink.revoked"
	ids := new(domain.EventIDSource)
	for range 2 {
		if err := f.repo.AppendEvent(ctx, revoked, func() string { return ids.Next(f.clock.Now()) }); err != nil {
			t.Fatal(err)
		}
	}
	f.clock.Advance(pastSettle)
	if err := f.app.RelayOnce(ctx); err != nil {
		t.Fatal(err)
	}
	f.clock.Advance(pastSettle)
	got := f.list(app.EventsInput{WorkspaceID: "a", Types: []string{"keyPair.rotated", "portalLink.revoked"}}).Events
	wantTypes(t, "the portal's events", got, "portalLink.revoked", "keyPair.rotated")
	for _, e := range got {
		if e.Actor != portal {
			t.Errorf("%s: actor %+v, want %+v", e.Type, e.Actor, portal)
		}
	}
}

// The settle window keeps a cursor from passing an event still landing: an
// event stamped earlier than one already stored, but inserted after it, is
// listed before it, because neither is listed until both are settled.
func TestEventsSettleWindowOrdersLateInserts(t *testing.T) {
	f := newEventsFixture(t, nil)
	ctx := context.Background()
	if err := f.create("a"); err != nil {
		t.Fatal(err)
	}
	f.clock.Advance(pastSettle)
	start := f.list(app.EventsInput{WorkspaceID: "a"})
	wantTypes(t, "after create", start.Events, "workspace.created")

	w, err := f.repo.Get(ctx, "a")
	if err != nil {
		t.Fatal(err)
	}
	t0 := f.clock.Now()
	later := domain.NewEvent(domain.EventUserSessionsRevoked, w, domain.Actor{WorkspaceID: "root"}, domain.Target{Type: "user", ID: "later@x.test"}, "", t0)
	earlier := domain.NewEvent(domain.EventUserSessionsRevoked, w, domain.Actor{WorkspaceID: "root"}, domain.Target{Type: "user", ID: "earlier@x.test"}, "", t0)
	// The event stamped at t0+100ms lands first.
	if err := f.repo.AppendEvent(ctx, later, func() string { return new(domain.EventIDSource).Next(t0.Add(100 * time.Millisecond)) }); err != nil {
		t.Fatal(err)
	}
	f.clock.Advance(150 * time.Millisecond)
	mid := f.list(app.EventsInput{WorkspaceID: "a", PageToken: start.NextPageToken})
	wantTypes(t, "while the later event settles", mid.Events)
	// The one stamped at t0 lands after it, within its bound (settle/2).
	if err := f.repo.AppendEvent(ctx, earlier, func() string { return new(domain.EventIDSource).Next(t0) }); err != nil {
		t.Fatal(err)
	}
	f.clock.Advance(pastSettle)
	res := f.list(app.EventsInput{WorkspaceID: "a", PageToken: mid.NextPageToken})
	if len(res.Events) != 2 || res.Events[0].Target.ID != "earlier@x.test" || res.Events[1].Target.ID != "later@x.test" {
		t.Fatalf("events after settling = %+v, want earlier then later", res.Events)
	}
}

// failingPublisher takes the store down between the change's write and its
// publish, once.
type failingPublisher struct {
	*mongostore.Repository
	fail bool
}

func (p *failingPublisher) PublishOutbox(ctx context.Context, id string, newID func() string) error {
	if p.fail {
		p.fail = false
		if err := env.Server().Stop(); err != nil {
			return err
		}
	}
	return p.Repository.PublishOutbox(ctx, id, newID)
}

// The crash case: the store fails between the two writes. The change is
// stored but not acknowledged (Unavailable); once the store is back, the
// relay publishes exactly one event for it. A write that failed leaves no
// event.
func TestEventsStoreFailsBetweenTheWrites(t *testing.T) {
	var pub *failingPublisher
	f := newEventsFixture(t, func(r *mongostore.Repository) app.EventLog {
		pub = &failingPublisher{Repository: r}
		return pub
	})
	ctx := context.Background()
	restarted := true
	t.Cleanup(func() {
		if !restarted {
			_ = env.Server().Restart(context.Background())
		}
	})

	if pending, err := f.repo.WorkspacesWithOutbox(ctx, f.clock.Now().Add(time.Hour), 10); err != nil || len(pending) != 0 {
		t.Fatalf("outboxes before the failure: %v, %v", pending, err)
	}
	pub.fail, restarted = true, false
	err := f.create("a")
	if kind := fault.KindOf(err); kind != fault.Unavailable {
		t.Fatalf("create with the store failing before the publish: error = %v (kind %v), want Unavailable", err, kind)
	}
	if err := env.Server().Restart(ctx); err != nil {
		t.Fatal(err)
	}
	restarted = true
	if _, err := f.repo.Get(ctx, "a"); err != nil {
		t.Fatalf("the change is not stored: %v", err)
	}
	f.clock.Advance(pastSettle)
	wantTypes(t, "before the relay", f.list(app.EventsInput{WorkspaceID: "a"}).Events)

	for range 2 {
		if err := f.app.RelayOnce(ctx); err != nil {
			t.Fatalf("relay: %v", err)
		}
	}
	f.clock.Advance(pastSettle)
	wantTypes(t, "after the relay ran twice", f.list(app.EventsInput{WorkspaceID: "a"}).Events, "workspace.created")
	if pending, err := f.repo.WorkspacesWithOutbox(ctx, f.clock.Now().Add(time.Hour), 10); err != nil || len(pending) != 0 {
		t.Fatalf("outboxes left after the relay: %v, %v", pending, err)
	}

	// A retry of the create is acknowledged and adds no second event.
	if err := f.create("a"); err != nil {
		t.Fatalf("retried create: %v", err)
	}
	f.clock.Advance(pastSettle)
	wantTypes(t, "after a retried create", f.list(app.EventsInput{WorkspaceID: "a"}).Events, "workspace.created")

	// A write that fails leaves no event: the store is down for the update.
	if err := env.Server().Stop(); err != nil {
		t.Fatal(err)
	}
	restarted = false
	name := "Never stored"
	callCtx, cancel := context.WithTimeout(ctx, 3*time.Second)
	_, err = f.app.UpdateWorkspace(callCtx, f.root, app.UpdateInput{ID: "a", Changes: domain.Changes{Name: &name}})
	cancel()
	if err == nil {
		t.Fatal("update with the store down succeeded")
	}
	if err := env.Server().Restart(ctx); err != nil {
		t.Fatal(err)
	}
	restarted = true
	if err := f.app.RelayOnce(ctx); err != nil {
		t.Fatal(err)
	}
	f.clock.Advance(pastSettle)
	wantTypes(t, "after a failed update", f.list(app.EventsInput{WorkspaceID: "a"}).Events, "workspace.created")
}

// Retention: the store removes events older than EVENT_RETENTION through
// the events' TTL index (the stand-in's TTL monitor runs every 100 ms in
// these tests, MongoDB's every minute); younger ones stay.
func TestEventsRetention(t *testing.T) {
	f := newEventsFixture(t, nil)
	f.clock.Advance(-91 * 24 * time.Hour)
	if err := f.create("old"); err != nil {
		t.Fatal(err)
	}
	f.clock.Advance(91 * 24 * time.Hour)
	if err := f.create("young"); err != nil {
		t.Fatal(err)
	}
	f.clock.Advance(pastSettle)
	wantTypes(t, "young", f.list(app.EventsInput{WorkspaceID: "young"}).Events, "workspace.created")
	testenv.Eventually(t, time.Minute, func() error {
		if old := f.list(app.EventsInput{WorkspaceID: "old"}).Events; len(old) > 0 {
			return fmt.Errorf("%d events left", len(old))
		}
		return nil
	}, "the event older than the retention removed")
	wantTypes(t, "young, after the old one's removal", f.list(app.EventsInput{WorkspaceID: "young"}).Events, "workspace.created")
}

// Updates of one workspace racing with the publish of its events (by the
// relay) lose neither a change nor an event: a publish empties the outbox
// only while the workspace is at the revision it read.
func TestPublishingNeverUndoesAConcurrentChange(t *testing.T) {
	f := newEventsFixture(t, nil)
	ctx := context.Background()
	if err := f.create("busy"); err != nil {
		t.Fatal(err)
	}
	stop := make(chan struct{})
	relayed := make(chan struct{})
	var ids domain.EventIDSource
	go func() {
		defer close(relayed)
		for {
			select {
			case <-stop:
				return
			default:
				_ = f.repo.PublishOutbox(ctx, "busy", func() string { return ids.Next(f.clock.Now()) })
			}
		}
	}()
	const updates = 20
	applied := 0
	for i := range updates {
		name := fmt.Sprintf("Name %d", i)
		if _, err := f.app.UpdateWorkspace(ctx, f.root, app.UpdateInput{ID: "busy", Changes: domain.Changes{Name: &name}}); err != nil {
			t.Fatalf("update %d: %v", i, err)
		}
		applied++
	}
	close(stop)
	<-relayed

	w, err := f.repo.Get(ctx, "busy")
	if err != nil {
		t.Fatal(err)
	}
	if w.Name() != fmt.Sprintf("Name %d", updates-1) || w.Revision() != int64(1+applied) {
		t.Fatalf("after %d updates: name %q, revision %d", applied, w.Name(), w.Revision())
	}
	f.clock.Advance(pastSettle)
	res := f.list(app.EventsInput{WorkspaceID: "busy", Types: []string{"workspace.updated"}, PageSize: ptr(int32(100))})
	if len(res.Events) != updates {
		t.Fatalf("%d update events for %d updates", len(res.Events), updates)
	}
}

func ptr[T any](v T) *T { return &v }

// An event is read back by its public id; an unknown id is not found.
func TestEventByID(t *testing.T) {
	f := newEventsFixture(t, nil)
	if err := f.create("a"); err != nil {
		t.Fatal(err)
	}
	f.clock.Advance(pastSettle)
	listed := f.list(app.EventsInput{WorkspaceID: "a"}).Events
	wantTypes(t, "a", listed, "workspace.created")
	got, err := f.repo.Event(context.Background(), listed[0].ID)
	if err != nil || got.ID != listed[0].ID || got.Type != domain.EventWorkspaceCreated || got.WorkspaceID != "a" || !slices.Equal(got.Managers, listed[0].Managers) {
		t.Fatalf("Event(%s) = %+v, %v; want %+v", listed[0].ID, got, err, listed[0])
	}
	if _, err := f.repo.Event(context.Background(), "0190000000000000000000000000"); !errors.Is(err, domain.ErrNotFound) {
		t.Fatalf("Event of an unknown id: %v, want ErrNotFound", err)
	}
}
