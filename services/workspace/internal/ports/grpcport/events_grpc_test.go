package grpcport

import (
	"encoding/json"
	"reflect"
	"testing"
	"time"

	workspacev1 "github.com/liveproctor/workspaces/pkg/gen/workspace/v1"
	"github.com/liveproctor/workspaces/pkg/restrules"
	"github.com/liveproctor/workspaces/services/workspace/internal/domain"
)

// A webhook delivery's body is an event exactly as the events feed shows
// it: what EncodeEvent writes reads the same as the event in a page of
// GET …/events, which the gateway renders with the same options; what only
// some types carry is there for them and absent for the others.
func TestEncodeEventIsTheFeedsRendering(t *testing.T) {
	at := time.Date(2026, 11, 28, 9, 0, 0, 123e6, time.UTC)
	events := []domain.Event{
		{ID: "0190b2a4c5d6e7f8a9b0c1d2e3f4", Type: domain.EventWorkspaceUpdated, OccurredAt: at, WorkspaceID: "w",
			Actor: domain.Actor{WorkspaceID: "root", AppKey: "k"}, Target: domain.Target{Type: domain.TargetWorkspace, ID: "w"},
			RequestID: "req-1", ChangedFields: []string{"name"}},
		{ID: "0190b2a4c5d6e7f8a9b0c1d2e3f5", Type: domain.EventWebhookDisabled, OccurredAt: at, WorkspaceID: "w",
			Actor: domain.SystemActor, Target: domain.Target{Type: domain.TargetWebhook, ID: "wh"}, Reason: "the endpoint answered 410 Gone"},
		{ID: "0190b2a4c5d6e7f8a9b0c1d2e3f6", Type: domain.EventWebhookAttemptsExhausted, OccurredAt: at, WorkspaceID: "w",
			Actor: domain.SystemActor, Target: domain.Target{Type: domain.TargetWebhook, ID: "wh"}, EventID: "0190b2a4c5d6e7f8a9b0c1d2e3f4"},
	}
	page := &workspacev1.ListWorkspaceEventsResponse{NextPageToken: "t"}
	for _, e := range events {
		page.Events = append(page.Events, eventToProto(e))
	}
	text, err := restrules.JSON.Marshal(page)
	if err != nil {
		t.Fatal(err)
	}
	var feed struct {
		Events []map[string]any `json:"events"`
	}
	if err := json.Unmarshal(text, &feed); err != nil {
		t.Fatal(err)
	}
	for i, e := range events {
		body, err := EncodeEvent(e)
		if err != nil {
			t.Fatal(err)
		}
		var got map[string]any
		if err := json.Unmarshal(body, &got); err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, feed.Events[i]) {
			t.Errorf("%s: delivered %v, the feed shows %v", e.Type, got, feed.Events[i])
		}
		_, reason := got["reason"]
		_, eventID := got["eventId"]
		if reason != (e.Reason != "") || eventID != (e.EventID != "") {
			t.Errorf("%s: reason and eventId present: %v, %v", e.Type, reason, eventID)
		}
	}
}

// The document's lists of event types are the domain's: the feed's type
// filter and a webhook's eventTypes name the published types, and an
// event's type is one of those or a webhook's test message.
func TestDocumentedEventTypesAreTheDomains(t *testing.T) {
	published := make([]string, len(domain.EventTypes))
	for i, e := range domain.EventTypes {
		published[i] = string(e)
	}
	for name, got := range map[string][]string{
		"ListWorkspaceEventsRequest.type":  restrules.Field((&workspacev1.ListWorkspaceEventsRequest{}).ProtoReflect().Descriptor().Fields().ByName("type")).GetEnum(),
		"CreateWebhookRequest.event_types": restrules.Field((&workspacev1.CreateWebhookRequest{}).ProtoReflect().Descriptor().Fields().ByName("event_types")).GetEnum(),
		"UpdateWebhookRequest.event_types": restrules.Field((&workspacev1.UpdateWebhookRequest{}).ProtoReflect().Descriptor().Fields().ByName("event_types")).GetEnum(),
	} {
		if !reflect.DeepEqual(got, published) {
			t.Errorf("%s: %v, want %v", name, got, published)
		}
	}
	got := restrules.Field((&workspacev1.Event{}).ProtoReflect().Descriptor().Fields().ByName("type")).GetEnum()
	if want := append(published, string(domain.EventWebhookTest)); !reflect.DeepEqual(got, want) {
		t.Errorf("Event.type: %v, want %v", got, want)
	}
}

// An event names its actor by type: a key pair with its workspace and app
// key, the portal with its workspace and link, the system with neither;
// linkId only for the portal.
func TestEventActors(t *testing.T) {
	for _, tc := range []struct {
		actor domain.Actor
		want  string
	}{
		{domain.Actor{WorkspaceID: "root", AppKey: "k"}, `{"type":"keyPair","workspaceId":"root","appKey":"k"}`},
		{domain.Actor{WorkspaceID: "school", PortalLinkID: "0f8e2c1a-3b4d-4e5f-8a9b-0c1d2e3f4a5b"},
			`{"type":"portal","workspaceId":"school","appKey":"","linkId":"0f8e2c1a-3b4d-4e5f-8a9b-0c1d2e3f4a5b"}`},
		{domain.SystemActor, `{"type":"system","workspaceId":"","appKey":""}`},
	} {
		body, err := EncodeEvent(domain.Event{Type: domain.EventKeyPairRotated, Actor: tc.actor})
		if err != nil {
			t.Fatal(err)
		}
		var event struct {
			Actor json.RawMessage `json:"actor"`
		}
		if err := json.Unmarshal(body, &event); err != nil {
			t.Fatal(err)
		}
		var got, want any
		_ = json.Unmarshal(event.Actor, &got)
		_ = json.Unmarshal([]byte(tc.want), &want)
		if !reflect.DeepEqual(got, want) {
			t.Errorf("actor %+v renders %s, want %s", tc.actor, event.Actor, tc.want)
		}
	}
}
