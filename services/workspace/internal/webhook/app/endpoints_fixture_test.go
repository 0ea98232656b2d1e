package app_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/liveproctor/workspaces/services/workspace/internal/adapters/memstore"
	"github.com/liveproctor/workspaces/services/workspace/internal/adapters/secretbox"
	"github.com/liveproctor/workspaces/services/workspace/internal/app"
	"github.com/liveproctor/workspaces/services/workspace/internal/app/apptest"
	"github.com/liveproctor/workspaces/services/workspace/internal/domain"
	ltidomain "github.com/liveproctor/workspaces/services/workspace/internal/lti/domain"
	webhookapp "github.com/liveproctor/workspaces/services/workspace/internal/webhook/app"
)

const (
	rootKey    = "00000000-0000-4000-8000-000000000001"
	rootSecret = "00000000-0000-4000-8000-000000000002"
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

// endpointsFixture is the workspace application over a memory store (its audit
// trail too), bootstrapped with a root workspace, and the endpoints' use
// cases over it with a memory Deliveries and EventSource.
type endpointsFixture struct {
	t          *testing.T
	app        *app.App
	repo       *memstore.Repository
	clock      *clock
	root       domain.Caller
	deliveries *fakeDeliveries
	events     fakeEvents
	endpoints  *webhookapp.Endpoints
}

func newEndpointsFixture(t *testing.T) *endpointsFixture {
	t.Helper()
	repo := memstore.New()
	c := &clock{now: time.Date(2026, 11, 28, 9, 0, 0, 0, time.UTC)}
	box, err := secretbox.New(bytes.Repeat([]byte{1}, 32), bytes.Repeat([]byte{2}, 32))
	if err != nil {
		t.Fatal(err)
	}
	a := app.New(repo, box, app.Settings{LTIToolURLs: ltidomain.NewToolURLs("https://lti.test")},
		app.WithClock(c.Now), app.WithEventLog(repo, app.EventSettings{}))
	ctx := context.Background()
	if _, err := a.Bootstrap(ctx, app.BootstrapConfig{WorkspaceID: "root", Name: "Root", AppKey: rootKey, AppSecret: rootSecret}); err != nil {
		t.Fatal(err)
	}
	root, err := a.Authenticate(ctx, rootKey, rootSecret)
	if err != nil {
		t.Fatal(err)
	}
	root.RequestID = "req-root"
	f := &endpointsFixture{t: t, app: a, repo: repo, clock: c, root: root, deliveries: &fakeDeliveries{}, events: fakeEvents{}}
	f.endpoints = webhookapp.NewEndpoints(app.NewWebhookPort(a), box, f.deliveries, f.events, encodeJSON,
		webhookapp.Settings{Now: c.Now})
	return f
}

// create makes a workspace as caller and returns a caller for its server pair.
func (f *endpointsFixture) create(caller domain.Caller, id string) domain.Caller {
	f.t.Helper()
	_, c := apptest.CreateWorkspace(f.t, f.app, caller, app.CreateInput{ID: id})
	return c
}

// trail is the audit trail of workspace id, of the types given.
func (f *endpointsFixture) trail(id string, types ...domain.EventType) []domain.Event {
	f.t.Helper()
	events, err := f.repo.ListEvents(context.Background(), domain.EventQuery{WorkspaceID: id, Types: types, Limit: 1000})
	if err != nil {
		f.t.Fatal(err)
	}
	return events
}

// encodeJSON stands for the gRPC port's rendering of an event.
func encodeJSON(e domain.Event) ([]byte, error) {
	return json.Marshal(map[string]string{"id": e.ID, "type": string(e.Type), "workspaceId": e.WorkspaceID})
}

// fakeDeliveries records what the use cases ask of delivery.
type fakeDeliveries struct {
	mu       sync.Mutex
	calls    []string
	attempts []webhookapp.Attempt
	fail     error // Start's answer
}

func (d *fakeDeliveries) record(format string, args ...any) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.calls = append(d.calls, fmt.Sprintf(format, args...))
}

func (d *fakeDeliveries) Calls() []string {
	d.mu.Lock()
	defer d.mu.Unlock()
	return slices.Clone(d.calls)
}

func (d *fakeDeliveries) Start(_ context.Context, workspaceID, endpointID, from string) error {
	d.record("start %s %s %s", workspaceID, endpointID, from)
	return d.fail
}

func (d *fakeDeliveries) Forget(_ context.Context, endpointID string) error {
	d.record("forget %s", endpointID)
	return nil
}

func (d *fakeDeliveries) Attempts(_ context.Context, endpointID, pageToken string, pageSize int) ([]webhookapp.Attempt, string, error) {
	d.record("attempts %s %q %d", endpointID, pageToken, pageSize)
	return d.attempts, "", nil
}

func (d *fakeDeliveries) Resend(_ context.Context, workspaceID, endpointID, eventID string) error {
	d.record("resend %s %s %s", workspaceID, endpointID, eventID)
	return nil
}

func (d *fakeDeliveries) Recover(_ context.Context, workspaceID, endpointID, after string) error {
	d.record("recover %s %s %s", workspaceID, endpointID, after)
	return nil
}

func (d *fakeDeliveries) Test(_ context.Context, workspaceID, endpointID, msgID string, body []byte) error {
	d.record("test %s %s %s %s", workspaceID, endpointID, msgID, body)
	return nil
}

// fakeEvents holds the events each workspace sees, by id.
type fakeEvents map[string]domain.Event

func (fakeEvents) Next(context.Context, string, string, []domain.EventType, int) ([]domain.Event, error) {
	return nil, nil
}

func (ev fakeEvents) Event(_ context.Context, workspaceID, eventID string) (domain.Event, error) {
	e, ok := ev[eventID]
	if !ok || e.WorkspaceID != workspaceID && !slices.Contains(e.Managers, workspaceID) {
		return domain.Event{}, domain.ErrNotFound
	}
	return e, nil
}
