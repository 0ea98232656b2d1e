package repotest

import (
	"fmt"
	"testing"
	"time"

	"github.com/liveproctor/workspaces/services/workspace/internal/domain"
	webhookdomain "github.com/liveproctor/workspaces/services/workspace/internal/webhook/domain"
)

// The webhook endpoints: listed in the workspace, every field (the sealed
// secrets and the overlap's end included) kept by Create and by the
// revision-checked Update.

// webhooksChangeThroughUpdate: endpoints a workspace is created with, and
// those added, changed, rotated, disabled and removed by Update, read back
// as they were written.
func webhooksChangeThroughUpdate(t *testing.T, r domain.Repository) {
	s := sample("a")
	s.Webhooks = []webhookdomain.Endpoint{{
		ID: "wh-0", URL: "https://hooks.example.com/a?x=1", Description: "créé", EventTypes: []string{"workspace.updated", "keyPair.rotated"},
		Enabled: false, DisabledReason: "the endpoint answered 410 Gone", EnabledAt: t0, CreatedAt: t0, UpdatedAt: t1,
		SealedSecret: []byte("sealed-0"), SealedPreviousSecret: []byte("sealed-prev"), PreviousUntil: t1.Add(24 * time.Hour),
	}}
	mustCreate(t, r, s)
	w := mustGet(t, r, "a")
	s.Revision = 1
	if diff := compare(w, workspace(s)); diff != "" {
		t.Fatalf("created with an endpoint: %s", diff)
	}

	if _, err := w.AddWebhook("wh-1", webhookdomain.NewEndpoint{URL: "https://8.8.8.8/in"}, []byte("sealed-1"), domain.WebhookURLPolicy{}, t1); err != nil {
		t.Fatal(err)
	}
	if _, err := w.RotateWebhookSecret("wh-1", []byte("sealed-2"), time.Hour, t1); err != nil {
		t.Fatal(err)
	}
	on := true
	if _, _, err := w.UpdateWebhook("wh-0", webhookdomain.Changes{Enabled: &on}, domain.WebhookURLPolicy{}, t1); err != nil {
		t.Fatal(err)
	}
	want := mustUpdate(t, r, w)
	got := mustGet(t, r, "a")
	if diff := compare(got, want); diff != "" {
		t.Fatalf("after Update: %s", diff)
	}
	e, ok := got.Webhooks().Get("wh-1")
	if !ok || fmt.Sprintf("%s", e.SealedSecrets(t1)) != "[sealed-2 sealed-1]" || fmt.Sprintf("%s", e.SealedSecrets(t1.Add(time.Hour))) != "[sealed-2]" {
		t.Fatalf("the rotated endpoint as stored: %+v", e)
	}
	if e, _ := got.Webhooks().Get("wh-0"); !e.Enabled || e.DisabledReason != "" || !e.EnabledAt.Equal(t1) {
		t.Fatalf("the re-enabled endpoint as stored: %+v", e)
	}

	if _, err := got.RemoveWebhook("wh-0", t1); err != nil {
		t.Fatal(err)
	}
	mustUpdate(t, r, got)
	if all := mustGet(t, r, "a").Webhooks().All(); len(all) != 1 || all[0].ID != "wh-1" {
		t.Fatalf("after a remove: %+v", all)
	}
}

func webhooks(es []webhookdomain.Endpoint) []webhookdomain.Endpoint {
	for i := range es {
		e := &es[i]
		e.EnabledAt, e.CreatedAt, e.UpdatedAt, e.PreviousUntil = ms(e.EnabledAt), ms(e.CreatedAt), ms(e.UpdatedAt), ms(e.PreviousUntil)
		e.EventTypes = nilIfEmpty(e.EventTypes)
		e.SealedPreviousSecret = nilIfEmpty(e.SealedPreviousSecret)
	}
	return nilIfEmpty(es)
}
