package domain_test

import (
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/liveproctor/workspaces/services/workspace/internal/domain"
	webhookdomain "github.com/liveproctor/workspaces/services/workspace/internal/webhook/domain"
)

// What the workspace holds for webhooks (webhook.go): the rules of
// endpoints are the webhook context's and tested there; these check what
// the workspace adds: the types it publishes, its deleted state and its
// events.

func TestWebhookEventTypesAreThePublishedOnes(t *testing.T) {
	for _, typ := range domain.EventTypes {
		in := webhookdomain.NewEndpoint{URL: "https://hooks.example.com/", EventTypes: []string{string(typ)}}
		if err := domain.CheckNewWebhook(in, domain.WebhookURLPolicy{}); err != nil {
			t.Errorf("%s: %v", typ, err)
		}
	}
	in := webhookdomain.NewEndpoint{URL: "https://hooks.example.com/", EventTypes: []string{string(domain.EventWebhookTest)}}
	if err := domain.CheckNewWebhook(in, domain.WebhookURLPolicy{}); err == nil {
		t.Error("webhook.test is no event of the trail")
	}
}

func TestWebhookLife(t *testing.T) {
	w := mustCreate(t, "w", mustRoot(t))
	now := time.Date(2026, 11, 28, 9, 0, 0, 0, time.UTC)
	in := webhookdomain.NewEndpoint{URL: "https://hooks.example.com/", EventTypes: []string{"webhook.disabled"}}
	e, err := w.AddWebhook("wh-1", in, []byte("sealed"), domain.WebhookURLPolicy{}, now)
	if err != nil || e.ID != "wh-1" || !e.Enabled {
		t.Fatalf("add: %+v, %v", e, err)
	}
	desc := "the back end"
	if _, changed, err := w.UpdateWebhook("wh-1", webhookdomain.Changes{Description: &desc}, domain.WebhookURLPolicy{}, now); err != nil || !changed {
		t.Fatalf("update: %v, %v", changed, err)
	}
	if _, changed, err := w.UpdateWebhook("wh-1", webhookdomain.Changes{Description: &desc}, domain.WebhookURLPolicy{}, now); err != nil || changed {
		t.Fatalf("the same update again: %v, %v", changed, err)
	}
	if _, err := w.RotateWebhookSecret("wh-1", []byte("sealed-2"), time.Hour, now); err != nil {
		t.Fatal(err)
	}
	if off, err := w.DisableWebhook("wh-1", "the endpoint answered 410 Gone", now); err != nil || !off {
		t.Fatalf("disable: %v, %v", off, err)
	}
	if off, err := w.DisableWebhook("wh-1", "again", now); err != nil || off {
		t.Fatalf("disable again: %v, %v", off, err)
	}
	if err := w.RecordWebhookAttemptsExhausted("wh-1", "0190b2a4c5d6e7f8a9b0c1d2e3f4", now); err != nil {
		t.Fatal(err)
	}
	if err := w.RecordWebhookAttemptsExhausted("nope", "0190b2a4c5d6e7f8a9b0c1d2e3f4", now); !errors.Is(err, webhookdomain.ErrEndpointNotFound) {
		t.Fatalf("exhausted on an unknown endpoint: %v", err)
	}
	if removed, err := w.RemoveWebhook("wh-1", now); err != nil || removed.ID != "wh-1" || w.Webhooks().Len() != 0 {
		t.Fatalf("remove: %+v, %v", removed, err)
	}

	var got []domain.Event
	for _, e := range w.PendingEvents() {
		if e.Target == (domain.Target{Type: domain.TargetWebhook, ID: "wh-1"}) {
			got = append(got, e)
		}
	}
	want := []domain.EventType{domain.EventWebhookCreated, domain.EventWebhookUpdated, domain.EventWebhookSecretRotated,
		domain.EventWebhookDisabled, domain.EventWebhookAttemptsExhausted, domain.EventWebhookDeleted}
	var types []domain.EventType
	for _, e := range got {
		types = append(types, e.Type)
	}
	if !slices.Equal(types, want) {
		t.Fatalf("events %v, want %v", types, want)
	}
	if !slices.Equal(got[1].ChangedFields, []string{"description"}) {
		t.Errorf("the update's changed fields: %v", got[1].ChangedFields)
	}
	if got[3].Reason != "the endpoint answered 410 Gone" || got[4].EventID != "0190b2a4c5d6e7f8a9b0c1d2e3f4" || got[0].Reason != "" || got[0].EventID != "" {
		t.Errorf("what only some types carry: %+v", got)
	}
}

func TestDeletedWorkspaceChangesNoWebhook(t *testing.T) {
	w := mustCreate(t, "w", mustRoot(t))
	in := webhookdomain.NewEndpoint{URL: "https://hooks.example.com/"}
	if _, err := w.AddWebhook("wh-1", in, []byte("sealed"), domain.WebhookURLPolicy{}, t0); err != nil {
		t.Fatal(err)
	}
	if err := w.Delete(t0); err != nil {
		t.Fatal(err)
	}
	before := len(w.PendingEvents())
	on := true
	for name, err := range map[string]error{
		"add": func() error {
			_, err := w.AddWebhook("wh-2", in, []byte("s"), domain.WebhookURLPolicy{}, t0)
			return err
		}(),
		"update": func() error {
			_, _, err := w.UpdateWebhook("wh-1", webhookdomain.Changes{Enabled: &on}, domain.WebhookURLPolicy{}, t0)
			return err
		}(),
		"rotate":    func() error { _, err := w.RotateWebhookSecret("wh-1", []byte("s"), 0, t0); return err }(),
		"disable":   func() error { _, err := w.DisableWebhook("wh-1", "x", t0); return err }(),
		"exhausted": w.RecordWebhookAttemptsExhausted("wh-1", "x", t0),
		"remove":    func() error { _, err := w.RemoveWebhook("wh-1", t0); return err }(),
	} {
		if !errors.Is(err, domain.ErrDeleted) {
			t.Errorf("%s: %v", name, err)
		}
	}
	if len(w.PendingEvents()) != before || w.Webhooks().Len() != 1 {
		t.Error("a deleted workspace's webhooks changed")
	}
}
