package e2e

import (
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"
)

// webhook is an endpoint as the webhook routes answer it; Secret only in
// a create's answer.
type webhook struct {
	ID             string   `json:"id"`
	URL            string   `json:"url"`
	EventTypes     []string `json:"eventTypes"`
	Description    string   `json:"description"`
	Enabled        bool     `json:"enabled"`
	DisabledReason string   `json:"disabledReason"`
	Secret         string   `json:"secret"`
	CreatedAt      string   `json:"createdAt"`
	UpdatedAt      string   `json:"updatedAt"`
}

// secretPattern is a webhook secret: whsec_ and the base64 of 32 bytes.
var secretPattern = regexp.MustCompile(`^whsec_[A-Za-z0-9+/]{43}=$`)

// eventIDPattern is an event's id.
var eventIDPattern = regexp.MustCompile(`^[0-9a-f]{28}$`)

func webhooksPath(id string) string { return "/api/workspace/" + id + "/webhooks" }

func webhookPath(id, webhookID string) string {
	return webhooksPath(id) + "/" + url.PathEscape(webhookID)
}

func (c client) patch(path string, body any) *response { return c.do(http.MethodPatch, path, body) }

// addWebhook adds an endpoint as c and returns the create's answer.
func (c client) addWebhook(id string, body map[string]any) webhook {
	c.t.Helper()
	var w webhook
	c.post(webhooksPath(id), body).wantStatus(http.StatusCreated).decode(&w)
	return w
}

func (c client) webhooks(id string) []webhook {
	c.t.Helper()
	var page struct {
		Webhooks []webhook `json:"webhooks"`
	}
	c.get(webhooksPath(id)).ok(&page)
	return page.Webhooks
}

// A workspace adds webhooks (the secret shown once, 201), reads them back
// without secrets, changes them by the body's keys, rotates a secret,
// reads an empty page of attempts, asks for a resend, a recovery and a
// test message (202), and deletes one; each change is in its audit trail,
// with the webhook as the target.
func TestWebhookLifecycle(t *testing.T) {
	w := asRoot(t).create(unique(t, "w"), nil)
	self := w.server(t)
	id := w.WorkspaceID
	if hooks := self.webhooks(id); hooks == nil || len(hooks) != 0 {
		t.Fatalf("a new workspace's webhooks: %+v", hooks)
	}

	created := self.addWebhook(id, map[string]any{"url": "https://hooks.example.com/in?source=lp"})
	if !uuidPattern.MatchString(created.ID) || created.URL != "https://hooks.example.com/in?source=lp" || !created.Enabled ||
		created.EventTypes == nil || len(created.EventTypes) != 0 || created.Description != "" || created.DisabledReason != "" ||
		!secretPattern.MatchString(created.Secret) || !timePattern.MatchString(created.CreatedAt) {
		t.Fatalf("created: %+v", created)
	}
	second := self.addWebhook(id, map[string]any{
		"url": "https://8.8.8.8/hooks", "eventTypes": []string{"keyPair.rotated", "webhook.disabled"}, "description": "le back-end",
	})
	if second.Secret == created.Secret || !slices.Equal(second.EventTypes, []string{"keyPair.rotated", "webhook.disabled"}) {
		t.Fatalf("the second: %+v", second)
	}

	// The secret is shown once: neither a get nor the list has it.
	got := self.get(webhookPath(id, created.ID)).ok(nil).object()
	if _, shown := got["secret"]; shown || got["id"] != created.ID {
		t.Fatalf("get: %v", got)
	}
	if hooks := self.webhooks(id); len(hooks) != 2 || hooks[0].ID != created.ID || hooks[1].ID != second.ID || hooks[0].Secret != "" || hooks[1].Secret != "" {
		t.Fatalf("list: %+v", hooks)
	}

	// PATCH changes what the body names; [] admits every type again.
	var patched webhook
	self.patch(webhookPath(id, second.ID), map[string]any{"enabled": false, "description": "paused"}).ok(&patched)
	if patched.Enabled || patched.Description != "paused" || patched.URL != second.URL || len(patched.EventTypes) != 2 || patched.DisabledReason != "" {
		t.Fatalf("patched: %+v", patched)
	}
	self.patch(webhookPath(id, second.ID), map[string]any{"eventTypes": []string{}, "enabled": true}).ok(&patched)
	if !patched.Enabled || patched.EventTypes == nil || len(patched.EventTypes) != 0 || patched.Description != "paused" {
		t.Fatalf("patched again: %+v", patched)
	}
	self.patch(webhookPath(id, second.ID), map[string]any{"enabled": true}).ok(&patched) // nothing changes, nothing recorded

	// A rotation answers the new secret and when the old one stops
	// signing: a day by default.
	var rotated struct {
		Secret                  string `json:"secret"`
		PreviousSecretExpiresAt string `json:"previousSecretExpiresAt"`
	}
	before := time.Now()
	self.post(webhookPath(id, created.ID)+":rotateSecret", map[string]any{}).ok(&rotated)
	expires, err := time.Parse(time.RFC3339, rotated.PreviousSecretExpiresAt)
	if !secretPattern.MatchString(rotated.Secret) || rotated.Secret == created.Secret || err != nil ||
		expires.Before(before.Add(23*time.Hour)) || expires.After(before.Add(25*time.Hour)) {
		t.Fatalf("rotated: %+v (%v)", rotated, err)
	}
	self.post(webhookPath(id, created.ID)+":rotateSecret", map[string]any{"overlap": "0s"}).ok(&rotated)
	self.post(webhookPath(id, created.ID)+":rotateSecret", map[string]any{"overlap": "604801s"}).wantError(http.StatusBadRequest, "INVALID_ARGUMENT", "overlap")

	// No attempt yet: an empty page, the last.
	var attempts struct {
		Attempts      []map[string]any `json:"attempts"`
		NextPageToken string           `json:"nextPageToken"`
	}
	self.get(webhookPath(id, created.ID) + "/attempts").ok(&attempts)
	if attempts.Attempts == nil || len(attempts.Attempts) != 0 || attempts.NextPageToken != "" {
		t.Fatalf("attempts: %+v", attempts)
	}

	// Resend, recover and test are accepted (202), delivered later.
	made := self.waitEventsPrefix(id, url.Values{"type": {"webhook.created"}}, "webhook.created").Events[0]
	var resent struct {
		EventID string `json:"eventId"`
	}
	self.post(webhookPath(id, created.ID)+":resend", map[string]any{"eventId": made.ID}).wantStatus(http.StatusAccepted).decode(&resent)
	if resent.EventID != made.ID {
		t.Fatalf("resend answered %+v", resent)
	}
	self.post(webhookPath(id, created.ID)+":resend", map[string]any{"eventId": strings.Repeat("0", 28)}).wantError(http.StatusNotFound, "NOT_FOUND", "")
	self.post(webhookPath(id, created.ID)+":resend", map[string]any{"eventId": "nope"}).wantError(http.StatusBadRequest, "INVALID_ARGUMENT", "eventId")
	self.post(webhookPath(id, created.ID)+":recover", map[string]any{"since": made.ID}).wantStatus(http.StatusAccepted)
	self.post(webhookPath(id, created.ID)+":recover", map[string]any{"since": before.UTC().Format(time.RFC3339)}).wantStatus(http.StatusAccepted)
	self.post(webhookPath(id, created.ID)+":recover", map[string]any{"since": "yesterday"}).wantError(http.StatusBadRequest, "INVALID_ARGUMENT", "since")
	var tested struct {
		EventID string `json:"eventId"`
	}
	self.post(webhookPath(id, created.ID)+":test", map[string]any{}).wantStatus(http.StatusAccepted).decode(&tested)
	if !eventIDPattern.MatchString(tested.EventID) {
		t.Fatalf("test answered %+v", tested)
	}
	// Nothing is sent to a disabled webhook.
	self.patch(webhookPath(id, second.ID), map[string]any{"enabled": false}).ok(nil)
	self.post(webhookPath(id, second.ID)+":test", map[string]any{}).wantError(http.StatusConflict, "FAILED_PRECONDITION", "")
	self.post(webhookPath(id, second.ID)+":resend", map[string]any{"eventId": made.ID}).wantError(http.StatusConflict, "FAILED_PRECONDITION", "")

	var deleted webhook
	self.delete(webhookPath(id, created.ID)).ok(&deleted)
	if deleted.ID != created.ID || deleted.Secret != "" {
		t.Fatalf("delete answered %+v", deleted)
	}
	self.get(webhookPath(id, created.ID)).wantError(http.StatusNotFound, "NOT_FOUND", "")
	self.delete(webhookPath(id, created.ID)).wantError(http.StatusNotFound, "NOT_FOUND", "")
	self.get(webhookPath(id, created.ID)+"/attempts").wantError(http.StatusNotFound, "NOT_FOUND", "")
	self.post(webhookPath(id, created.ID)+":test", map[string]any{}).wantError(http.StatusNotFound, "NOT_FOUND", "")

	types := []string{"webhook.created", "webhook.updated", "webhook.deleted", "webhook.secretRotated"}
	page := self.waitEvents(id, url.Values{"type": types},
		"webhook.created", "webhook.created", "webhook.updated", "webhook.updated",
		"webhook.secretRotated", "webhook.secretRotated", "webhook.updated", "webhook.deleted")
	targets := []string{created.ID, second.ID, second.ID, second.ID, created.ID, created.ID, second.ID, created.ID}
	changed := [][]string{nil, nil, {"description", "enabled"}, {"eventTypes", "enabled"}, nil, nil, {"enabled"}, nil}
	for i, e := range page.Events {
		if e.Target.Type != "webhook" || e.Target.ID != targets[i] || e.Actor.AppKey != w.AppKeys.Server.ConsumerKey ||
			fmt.Sprint(e.ChangedFields) != fmt.Sprint(append([]string{}, changed[i]...)) {
			t.Fatalf("event %d: %+v", i, e)
		}
	}
	// The test message is in no trail.
	self.get("/api/workspace/"+id+"/events?type=webhook.test").wantError(http.StatusBadRequest, "INVALID_ARGUMENT", "type")
}

// The rule of the key pairs: the workspace itself and its managers, with
// a server pair; another tenant gets 404 for the workspace and for the
// webhook, an LTI pair 403, a deleted workspace 404.
func TestWebhooksAreTheWorkspacesAndItsManagers(t *testing.T) {
	root := asRoot(t)
	a := root.create(unique(t, "a"), nil)
	b := root.create(unique(t, "b"), nil)
	hook := root.addWebhook(a.WorkspaceID, map[string]any{"url": "https://hooks.example.com/a"})
	if hooks := a.server(t).webhooks(a.WorkspaceID); len(hooks) != 1 || hooks[0].ID != hook.ID {
		t.Fatalf("the workspace's own list: %+v", hooks)
	}
	asB := b.server(t)
	asB.get(webhooksPath(a.WorkspaceID)).wantError(http.StatusNotFound, "NOT_FOUND", "")
	asB.post(webhooksPath(a.WorkspaceID), map[string]any{"url": "https://hooks.example.com/b"}).wantError(http.StatusNotFound, "NOT_FOUND", "")
	asB.get(webhookPath(a.WorkspaceID, hook.ID)).wantError(http.StatusNotFound, "NOT_FOUND", "")
	asB.patch(webhookPath(a.WorkspaceID, hook.ID), map[string]any{"enabled": false}).wantError(http.StatusNotFound, "NOT_FOUND", "")
	asB.delete(webhookPath(a.WorkspaceID, hook.ID)).wantError(http.StatusNotFound, "NOT_FOUND", "")
	asB.get(webhookPath(b.WorkspaceID, hook.ID)).wantError(http.StatusNotFound, "NOT_FOUND", "")

	lti := as(t, a.AppKeys.LTI.ConsumerKey, a.AppKeys.LTI.SharedSecret)
	lti.get(webhooksPath(a.WorkspaceID)).wantError(http.StatusForbidden, "PERMISSION_DENIED", "")

	root.delete("/api/workspace/" + a.WorkspaceID).ok(nil)
	root.get(webhookPath(a.WorkspaceID, hook.ID)).wantError(http.StatusNotFound, "NOT_FOUND", "")
	root.post("/api/workspace/"+a.WorkspaceID+":undelete", nil).ok(nil)
	root.get(webhookPath(a.WorkspaceID, hook.ID)).ok(nil)
}

// Bad fields are 400 naming the field: URLs that are not https on a public
// host (WEBHOOK_ALLOW_INSECURE_HOSTS is empty on the shared stack),
// unknown or repeated event types, a description out of bounds; and the
// 21st webhook is 409.
func TestWebhookBadFieldsAndBound(t *testing.T) {
	w := asRoot(t).create(unique(t, "w"), nil)
	self := w.server(t)
	path := webhooksPath(w.WorkspaceID)
	cases := []struct {
		name  string
		body  map[string]any
		field string
	}{
		{"a private address", map[string]any{"url": "https://10.0.0.1/"}, "url"},
		{"loopback", map[string]any{"url": "https://127.0.0.1/"}, "url"},
		{"localhost", map[string]any{"url": "https://localhost:8443/in"}, "url"},
		{"link-local", map[string]any{"url": "https://169.254.169.254/latest"}, "url"},
		{"http", map[string]any{"url": "http://hooks.example.com/"}, "url"},
		{"a fragment", map[string]any{"url": "https://hooks.example.com/#in"}, "url"},
		{"no url", map[string]any{"description": "x"}, "url"},
		{"an unknown type", map[string]any{"url": "https://hooks.example.com/", "eventTypes": []string{"workspace.renamed"}}, "eventTypes"},
		{"the test type", map[string]any{"url": "https://hooks.example.com/", "eventTypes": []string{"webhook.test"}}, "eventTypes"},
		{"a type twice", map[string]any{"url": "https://hooks.example.com/", "eventTypes": []string{"keyPair.created", "keyPair.created"}}, "eventTypes"},
		{"a long description", map[string]any{"url": "https://hooks.example.com/", "description": strings.Repeat("d", 257)}, "description"},
		{"a control character", map[string]any{"url": "https://hooks.example.com/", "description": "a\nb"}, "description"},
		{"a secret", map[string]any{"url": "https://hooks.example.com/", "secret": "whsec_x"}, "secret"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			self.withT(t).post(path, c.body).wantError(http.StatusBadRequest, "INVALID_ARGUMENT", c.field)
		})
	}
	first := self.addWebhook(w.WorkspaceID, map[string]any{"url": "https://hooks.example.com/0"})
	self.patch(webhookPath(w.WorkspaceID, first.ID), map[string]any{"url": "https://10.0.0.1/"}).wantError(http.StatusBadRequest, "INVALID_ARGUMENT", "url")
	self.patch(webhookPath(w.WorkspaceID, first.ID), map[string]any{"eventTypes": nil}).wantError(http.StatusBadRequest, "INVALID_ARGUMENT", "eventTypes")
	for i := 1; i < 20; i++ {
		self.addWebhook(w.WorkspaceID, map[string]any{"url": fmt.Sprintf("https://hooks.example.com/%d", i)})
	}
	self.post(path, map[string]any{"url": "https://hooks.example.com/20"}).wantError(http.StatusConflict, "FAILED_PRECONDITION", "")
	self.delete(webhookPath(w.WorkspaceID, first.ID)).ok(nil)
	self.addWebhook(w.WorkspaceID, map[string]any{"url": "https://hooks.example.com/20"})
}
