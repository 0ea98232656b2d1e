package server_test

import (
	"context"
	"net/http"
	"slices"
	"strings"
	"testing"

	workspacev1 "github.com/liveproctor/workspaces/pkg/gen/workspace/v1"
)

func (f *fakeWorkspaces) UpdateWebhook(ctx context.Context, req *workspacev1.UpdateWebhookRequest) (*workspacev1.Webhook, error) {
	f.mu.Lock()
	f.webhookUpdate = req
	f.mu.Unlock()
	if err := f.answer(ctx); err != nil {
		return nil, err
	}
	return &workspacev1.Webhook{Id: req.GetWebhookId(), EventTypes: []string{}}, nil
}

func (f *fakeWorkspaces) webhookUpdated() *workspacev1.UpdateWebhookRequest {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.webhookUpdate
}

// PATCH …/webhooks/{webhookId} changes what the body names, as the
// workspace's update does: the mask is the body's keys but the path's ids,
// [] clears the event types (every type), null is refused.
func TestWebhookUpdateMaskFromBodyKeys(t *testing.T) {
	e := newEnv(t, options{})
	const path = "/api/workspace/w1/webhooks/wh1"
	tests := []struct {
		body string
		want []string
	}{
		{`{"enabled":false,"eventTypes":[],"webhookId":"wh1"}`, []string{"enabled", "event_types"}},
		{`{"url":"https://a.test/","description":""}`, []string{"url", "description"}},
		{`{}`, []string{}},
	}
	for _, tt := range tests {
		resp, body := e.do(t, http.MethodPatch, path, strings.NewReader(tt.body), nil)
		if resp.StatusCode != 200 {
			t.Fatalf("%s: status %d %s", tt.body, resp.StatusCode, body)
		}
		req := e.workspaces.webhookUpdated()
		if got := req.GetUpdateMask().GetPaths(); req.GetUpdateMask() == nil || !slices.Equal(got, tt.want) {
			t.Errorf("%s: mask %q, want %q", tt.body, got, tt.want)
		}
		if req.GetId() != "w1" || req.GetWebhookId() != "wh1" {
			t.Errorf("ids %q, %q", req.GetId(), req.GetWebhookId())
		}
	}
	for _, body := range []string{`{"eventTypes":null}`, `{"enabled":null}`, `{"updateMask":"url"}`, `{"secret":"x"}`, `{"webhookId":"other"}`} {
		resp, text := e.do(t, http.MethodPatch, path, strings.NewReader(body), nil)
		checkError(t, resp, text, 400, "INVALID_ARGUMENT")
	}
}
