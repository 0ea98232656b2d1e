package app_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/liveproctor/workspaces/pkg/fault"
	"github.com/liveproctor/workspaces/pkg/webhook"
	"github.com/liveproctor/workspaces/services/workspace/internal/app"
	"github.com/liveproctor/workspaces/services/workspace/internal/app/apptest"
	"github.com/liveproctor/workspaces/services/workspace/internal/domain"
	webhookapp "github.com/liveproctor/workspaces/services/workspace/internal/webhook/app"
	webhookdomain "github.com/liveproctor/workspaces/services/workspace/internal/webhook/domain"
)

var hook = webhookdomain.NewEndpoint{URL: "https://hooks.example.com/in", Description: "the back end"}

func TestCreateShowsTheSecretOnceAndStartsDeliveryFirst(t *testing.T) {
	f := newEndpointsFixture(t)
	ctx := context.Background()
	w := f.create(f.root, "w")
	created, err := f.endpoints.Create(ctx, w, "w", hook)
	if err != nil {
		t.Fatal(err)
	}
	ep := created.Endpoint
	if _, err := webhook.ParseSecret(created.Secret); err != nil || !strings.HasPrefix(created.Secret, "whsec_") {
		t.Fatalf("secret %q: %v", created.Secret, err)
	}
	if !ep.Enabled || ep.URL != hook.URL || !ep.CreatedAt.Equal(f.clock.Now()) || len(ep.EventTypes) != 0 {
		t.Fatalf("created: %+v", ep)
	}
	// The cursor starts from now, before the endpoint is stored.
	if got, want := f.deliveries.Calls(), []string{fmt.Sprintf("start w %s %s", ep.ID, domain.EventIDFloor(f.clock.Now()))}; !slices.Equal(got, want) {
		t.Fatalf("deliveries: %v, want %v", got, want)
	}
	// Delivery opens the secret that was shown.
	target, err := f.endpoints.Target(ctx, "w", ep.ID)
	if err != nil || !slices.Equal(target.Secrets, []string{created.Secret}) || target.From != domain.EventIDFloor(ep.EnabledAt) ||
		target.URL != hook.URL || !target.Enabled || target.WorkspaceID != "w" {
		t.Fatalf("target: %+v, %v", target, err)
	}
	// A manager may add one too; its creator is the actor of the event.
	if _, err := f.endpoints.Create(ctx, f.root, "w", hook); err != nil {
		t.Fatalf("the manager: %v", err)
	}
	events := f.trail("w", domain.EventWebhookCreated)
	if len(events) != 2 || events[0].Actor != w.Actor() || events[0].Target != (domain.Target{Type: domain.TargetWebhook, ID: ep.ID}) ||
		events[1].Actor != f.root.Actor() || events[1].RequestID != "req-root" {
		t.Fatalf("events: %+v", events)
	}
	list, err := f.endpoints.List(ctx, w, "w")
	if err != nil || len(list) != 2 || list[0].ID != ep.ID {
		t.Fatalf("list: %+v, %v", list, err)
	}
}

func TestCreateRefusals(t *testing.T) {
	f := newEndpointsFixture(t)
	ctx := context.Background()
	w := f.create(f.root, "w")
	other := f.create(f.root, "other")
	_, err := f.endpoints.Create(ctx, w, "w", webhookdomain.NewEndpoint{URL: "https://10.0.0.1/"})
	apptest.WantKind(t, err, fault.Invalid)
	_, err = f.endpoints.Create(ctx, other, "w", hook)
	apptest.WantKind(t, err, fault.NotFound)
	for range webhookdomain.MaxEndpoints {
		if _, err := f.endpoints.Create(ctx, w, "w", hook); err != nil {
			t.Fatal(err)
		}
	}
	_, err = f.endpoints.Create(ctx, w, "w", hook)
	if !errors.Is(err, webhookdomain.ErrTooManyEndpoints) {
		t.Fatalf("a 21st: %v", err)
	}
	// No refusal started a cursor.
	if n := len(f.deliveries.Calls()); n != webhookdomain.MaxEndpoints {
		t.Fatalf("%d cursors started, want %d", n, webhookdomain.MaxEndpoints)
	}
	// A failure to start stores nothing.
	f.deliveries.fail = fault.New(fault.Unavailable, "the store is down")
	_, err = f.endpoints.Create(ctx, f.root, "other", hook)
	apptest.WantKind(t, err, fault.Unavailable)
	if list, _ := f.endpoints.List(ctx, f.root, "other"); len(list) != 0 {
		t.Fatalf("stored without a cursor: %+v", list)
	}
}

func TestUpdateDeleteAndTheirEvents(t *testing.T) {
	f := newEndpointsFixture(t)
	ctx := context.Background()
	w := f.create(f.root, "w")
	created, err := f.endpoints.Create(ctx, w, "w", hook)
	if err != nil {
		t.Fatal(err)
	}
	id := created.Endpoint.ID
	off, url := false, "https://other.example.com/in"
	f.clock.Advance(time.Minute)
	ep, err := f.endpoints.Update(ctx, w, "w", id, webhookdomain.Changes{URL: &url, Enabled: &off})
	if err != nil || ep.Enabled || ep.URL != url {
		t.Fatalf("update: %+v, %v", ep, err)
	}
	// The same again records nothing.
	if _, err := f.endpoints.Update(ctx, w, "w", id, webhookdomain.Changes{Enabled: &off}); err != nil {
		t.Fatal(err)
	}
	f.clock.Advance(time.Minute)
	on := true
	if ep, err = f.endpoints.Update(ctx, w, "w", id, webhookdomain.Changes{Enabled: &on}); err != nil || !ep.EnabledAt.Equal(f.clock.Now()) {
		t.Fatalf("re-enable: %+v, %v", ep, err)
	}
	if target, _ := f.endpoints.Target(ctx, "w", id); target.From != domain.EventIDFloor(f.clock.Now()) {
		t.Fatalf("the live feed after re-enabling starts at %s", target.From)
	}
	bad := []string{"nope"}
	_, err = f.endpoints.Update(ctx, w, "w", id, webhookdomain.Changes{EventTypes: &bad})
	apptest.WantKind(t, err, fault.Invalid)
	_, err = f.endpoints.Update(ctx, w, "w", "nope", webhookdomain.Changes{Enabled: &on})
	if apptest.WantKind(t, err, fault.NotFound); !strings.Contains(err.Error(), `"nope"`) {
		t.Fatalf("an unknown endpoint: %v", err)
	}
	removed, err := f.endpoints.Delete(ctx, w, "w", id)
	if err != nil || removed.ID != id {
		t.Fatalf("delete: %+v, %v", removed, err)
	}
	if calls := f.deliveries.Calls(); calls[len(calls)-1] != "forget "+id {
		t.Fatalf("delivery not told: %v", calls)
	}
	_, err = f.endpoints.Get(ctx, w, "w", id)
	apptest.WantKind(t, err, fault.NotFound)
	if _, err := f.endpoints.Target(ctx, "w", id); !errors.Is(err, webhookapp.ErrEndpointGone) {
		t.Fatalf("target of a deleted endpoint: %v", err)
	}

	var types []domain.EventType
	var changed [][]string
	for _, e := range f.trail("w", domain.EventWebhookCreated, domain.EventWebhookUpdated, domain.EventWebhookDeleted) {
		types = append(types, e.Type)
		changed = append(changed, e.ChangedFields)
	}
	if want := []domain.EventType{domain.EventWebhookCreated, domain.EventWebhookUpdated, domain.EventWebhookUpdated, domain.EventWebhookDeleted}; !slices.Equal(types, want) {
		t.Fatalf("events %v, want %v", types, want)
	}
	if fmt.Sprint(changed[1:3]) != "[[url enabled] [enabled]]" {
		t.Fatalf("changed fields: %v", changed)
	}
}

func TestRotateSecretOverlap(t *testing.T) {
	f := newEndpointsFixture(t)
	ctx := context.Background()
	w := f.create(f.root, "w")
	created, err := f.endpoints.Create(ctx, w, "w", hook)
	if err != nil {
		t.Fatal(err)
	}
	id := created.Endpoint.ID
	rotated, err := f.endpoints.RotateSecret(ctx, w, "w", id, nil)
	if err != nil || rotated.Secret == created.Secret || !rotated.PreviousSecretExpiresAt.Equal(f.clock.Now().Add(24*time.Hour)) {
		t.Fatalf("rotate: %+v, %v", rotated, err)
	}
	target, err := f.endpoints.Target(ctx, "w", id)
	if err != nil || !slices.Equal(target.Secrets, []string{rotated.Secret, created.Secret}) {
		t.Fatalf("within the overlap: %v, %v", target.Secrets, err)
	}
	f.clock.Advance(24 * time.Hour)
	if target, _ = f.endpoints.Target(ctx, "w", id); !slices.Equal(target.Secrets, []string{rotated.Secret}) {
		t.Fatalf("after the overlap: %v", target.Secrets)
	}
	week := 8 * 24 * time.Hour
	_, err = f.endpoints.RotateSecret(ctx, w, "w", id, &week)
	apptest.WantKind(t, err, fault.Invalid)
	_, err = f.endpoints.RotateSecret(ctx, w, "w", "nope", nil)
	apptest.WantKind(t, err, fault.NotFound)
	if events := f.trail("w", domain.EventWebhookSecretRotated); len(events) != 1 {
		t.Fatalf("events: %+v", events)
	}
}

func TestAttemptsResendRecoverAndTest(t *testing.T) {
	f := newEndpointsFixture(t)
	ctx := context.Background()
	w := f.create(f.root, "w")
	created, err := f.endpoints.Create(ctx, w, "w", hook)
	if err != nil {
		t.Fatal(err)
	}
	id := created.Endpoint.ID
	seen := "0190b2a4c5d6e7f8a9b0c1d2e3f4"
	f.events[seen] = domain.Event{ID: seen, WorkspaceID: "w"}
	f.events["0190b2a4c5d6e7f8a9b0c1d2e3f5"] = domain.Event{ID: "0190b2a4c5d6e7f8a9b0c1d2e3f5", WorkspaceID: "other"}

	if _, _, err := f.endpoints.Attempts(ctx, w, "w", id, "tok"); err != nil {
		t.Fatal(err)
	}
	_, _, err = f.endpoints.Attempts(ctx, w, "w", "nope", "")
	apptest.WantKind(t, err, fault.NotFound)

	if err := f.endpoints.Resend(ctx, w, "w", id, seen); err != nil {
		t.Fatal(err)
	}
	apptest.WantKind(t, f.endpoints.Resend(ctx, w, "w", id, "0190b2a4c5d6e7f8a9b0c1d2e3f5"), fault.NotFound) // another's
	apptest.WantKind(t, f.endpoints.Resend(ctx, w, "w", id, "0190b2a4c5d6e7f8a9b0c1d2e3f6"), fault.NotFound) // unknown
	apptest.WantKind(t, f.endpoints.Resend(ctx, w, "w", id, "not-an-id"), fault.Invalid)

	if err := f.endpoints.Recover(ctx, w, "w", id, seen); err != nil {
		t.Fatal(err)
	}
	if err := f.endpoints.Recover(ctx, w, "w", id, "2026-11-28T08:00:00.5Z"); err != nil {
		t.Fatal(err)
	}
	apptest.WantKind(t, f.endpoints.Recover(ctx, w, "w", id, "yesterday"), fault.Invalid)
	apptest.WantKind(t, f.endpoints.Recover(ctx, w, "w", id, "0190b2a4c5d6e7f8a9b0c1d2e3f6"), fault.NotFound)

	msgID, err := f.endpoints.Test(ctx, w, "w", id)
	if _, ok := domain.EventIDTime(msgID); err != nil || !ok {
		t.Fatalf("test: %q, %v", msgID, err)
	}
	at, _ := time.Parse(time.RFC3339, "2026-11-28T08:00:00.5Z")
	want := []string{
		fmt.Sprintf("attempts %s %q %d", id, "tok", webhookapp.AttemptsPageSize),
		fmt.Sprintf("resend w %s %s", id, seen),
		fmt.Sprintf("recover w %s %s", id, "0190b2a4c5d6e7f8a9b0c1d2e3f3"), // that event and every later one
		fmt.Sprintf("recover w %s %s", id, domain.EventIDFloor(at)),
		fmt.Sprintf(`test w %s %s {"id":"%s","type":"webhook.test","workspaceId":"w"}`, id, msgID, msgID),
	}
	if got := f.deliveries.Calls()[1:]; !slices.Equal(got, want) {
		t.Fatalf("deliveries:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if events := f.trail("w", domain.EventWebhookTest); len(events) != 0 {
		t.Fatalf("the test message was recorded: %+v", events)
	}

	// Nothing is sent to an endpoint that is off.
	off := false
	if _, err := f.endpoints.Update(ctx, w, "w", id, webhookdomain.Changes{Enabled: &off}); err != nil {
		t.Fatal(err)
	}
	apptest.WantKind(t, f.endpoints.Resend(ctx, w, "w", id, seen), fault.FailedPrecondition)
	apptest.WantKind(t, f.endpoints.Recover(ctx, w, "w", id, seen), fault.FailedPrecondition)
	_, err = f.endpoints.Test(ctx, w, "w", id)
	apptest.WantKind(t, err, fault.FailedPrecondition)
}

func TestRecoverFromTheFirstIDOfAll(t *testing.T) {
	f := newEndpointsFixture(t)
	ctx := context.Background()
	w := f.create(f.root, "w")
	created, err := f.endpoints.Create(ctx, w, "w", hook)
	if err != nil {
		t.Fatal(err)
	}
	first := strings.Repeat("0", domain.EventIDLength)
	f.events[first] = domain.Event{ID: first, WorkspaceID: "w"}
	if err := f.endpoints.Recover(ctx, w, "w", created.Endpoint.ID, first); err != nil {
		t.Fatal(err)
	}
	if calls := f.deliveries.Calls(); calls[len(calls)-1] != fmt.Sprintf("recover w %s ", created.Endpoint.ID) {
		t.Fatalf("recover from the first id: %v", calls)
	}
}

func TestWhatDeliveryDecides(t *testing.T) {
	f := newEndpointsFixture(t)
	ctx := context.Background()
	w := f.create(f.root, "w")
	created, err := f.endpoints.Create(ctx, w, "w", hook)
	if err != nil {
		t.Fatal(err)
	}
	id := created.Endpoint.ID
	if err := f.endpoints.Disable(ctx, "w", id, "the endpoint answered 410 Gone"); err != nil {
		t.Fatal(err)
	}
	if err := f.endpoints.Disable(ctx, "w", id, "again"); err != nil {
		t.Fatalf("disable it again: %v", err)
	}
	if ep, _ := f.endpoints.Get(ctx, w, "w", id); ep.Enabled || ep.DisabledReason != "the endpoint answered 410 Gone" {
		t.Fatalf("disabled: %+v", ep)
	}
	if target, err := f.endpoints.Target(ctx, "w", id); err != nil || target.Enabled {
		t.Fatalf("the target of a disabled endpoint: %+v, %v", target, err)
	}
	if err := f.endpoints.AttemptsExhausted(ctx, "w", id, "0190b2a4c5d6e7f8a9b0c1d2e3f4"); err != nil {
		t.Fatal(err)
	}
	events := f.trail("w", domain.EventWebhookDisabled, domain.EventWebhookAttemptsExhausted)
	if len(events) != 2 || !events[0].Actor.System || events[0].Reason != "the endpoint answered 410 Gone" ||
		!events[1].Actor.System || events[1].EventID != "0190b2a4c5d6e7f8a9b0c1d2e3f4" {
		t.Fatalf("events: %+v", events)
	}
	// Gone: unknown endpoints and workspaces, and deleted workspaces.
	if err := f.endpoints.Disable(ctx, "w", "nope", "x"); err != nil {
		t.Fatalf("disable an unknown endpoint: %v", err)
	}
	for name, err := range map[string]error{
		"an unknown endpoint":  f.endpoints.AttemptsExhausted(ctx, "w", "nope", "x"),
		"an unknown workspace": f.endpoints.AttemptsExhausted(ctx, "nope", id, "x"),
		"its target":           func() error { _, err := f.endpoints.Target(ctx, "nope", id); return err }(),
	} {
		if !errors.Is(err, webhookapp.ErrEndpointGone) {
			t.Errorf("%s: %v", name, err)
		}
	}
	enable := true
	if _, err := f.endpoints.Update(ctx, w, "w", id, webhookdomain.Changes{Enabled: &enable}); err != nil {
		t.Fatal(err)
	}
	before, err := f.endpoints.Target(ctx, "w", id)
	if err != nil || !before.Enabled {
		t.Fatalf("target re-enabled: %+v, %v", before, err)
	}
	if _, err := f.app.DeleteWorkspace(ctx, f.root, "w", app.Precondition{}); err != nil {
		t.Fatal(err)
	}
	// A deleted workspace's endpoints are paused, not gone: an undelete
	// resumes them where they were (the live feed's floor unchanged).
	if target, err := f.endpoints.Target(ctx, "w", id); err != nil || target.Enabled {
		t.Fatalf("target in a deleted workspace: %+v, %v", target, err)
	}
	if err := f.endpoints.AttemptsExhausted(ctx, "w", id, "x"); !errors.Is(err, webhookapp.ErrEndpointGone) {
		t.Fatalf("exhausted in a deleted workspace: %v", err)
	}
	if err := f.endpoints.Disable(ctx, "w", id, "x"); err != nil {
		t.Fatalf("disable in a deleted workspace: %v", err)
	}
	if _, err := f.app.UndeleteWorkspace(ctx, f.root, "w"); err != nil {
		t.Fatal(err)
	}
	if after, err := f.endpoints.Target(ctx, "w", id); err != nil || !after.Enabled || after.From != before.From {
		t.Fatalf("target after the undelete: %+v, %v; before the delete: %+v", after, err, before)
	}
}
