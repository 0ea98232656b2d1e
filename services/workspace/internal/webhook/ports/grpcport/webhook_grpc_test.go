package grpcport

import (
	"fmt"
	"reflect"
	"testing"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/known/fieldmaskpb"

	"github.com/liveproctor/workspaces/pkg/fault"
	workspacev1 "github.com/liveproctor/workspaces/pkg/gen/workspace/v1"
	"github.com/liveproctor/workspaces/pkg/outbound"
	"github.com/liveproctor/workspaces/pkg/restrules"
	"github.com/liveproctor/workspaces/services/workspace/internal/domain"
	webhookdomain "github.com/liveproctor/workspaces/services/workspace/internal/webhook/domain"
)

// The document states the shape and bounds of a webhook's fields from the
// protos' rest.v1 options; the domain checks them. They are the same
// rules, or the document promises what the service refuses.
func TestWebhookRulesAreTheDomains(t *testing.T) {
	for _, m := range []proto.Message{&workspacev1.CreateWebhookRequest{}, &workspacev1.UpdateWebhookRequest{}} {
		fields := m.ProtoReflect().Descriptor().Fields()
		rule := func(name string) string {
			r := restrules.Field(fields.ByName(protoreflect.Name(name)))
			return fmt.Sprintf("pattern %s max %d items %d", r.GetPattern(), r.GetMaxLength(), r.GetMaxItems())
		}
		name := m.ProtoReflect().Descriptor().Name()
		if got, want := rule("url"), fmt.Sprintf("pattern %s max %d items 0", outbound.URLPattern, outbound.MaxURLLen); got != want {
			t.Errorf("%s.url: %s, want %s", name, got, want)
		}
		if got, want := rule("description"), fmt.Sprintf(`pattern ^[^\u0000-\u001F\u007F-\u009F]*$ max %d items 0`, webhookdomain.MaxDescriptionLength); got != want {
			t.Errorf("%s.description: %s, want %s", name, got, want)
		}
		if got, want := rule("event_types"), fmt.Sprintf("pattern  max 0 items %d", len(domain.EventTypes)); got != want {
			t.Errorf("%s.event_types: %s, want %s", name, got, want)
		}
	}
}

// changes lists what c changes, with the new values.
func changes(c webhookdomain.Changes) map[string]any {
	out := map[string]any{}
	if c.URL != nil {
		out["url"] = *c.URL
	}
	if c.EventTypes != nil {
		out["eventTypes"] = *c.EventTypes
	}
	if c.Description != nil {
		out["description"] = *c.Description
	}
	if c.Enabled != nil {
		out["enabled"] = *c.Enabled
	}
	return out
}

func TestWebhookChanges(t *testing.T) {
	full := func(mask ...string) *workspacev1.UpdateWebhookRequest {
		req := &workspacev1.UpdateWebhookRequest{
			Id: "w", WebhookId: "wh", Url: proto.String("https://a.test/"), EventTypes: []string{"workspace.created"},
			Description: proto.String("d"), Enabled: proto.Bool(true),
		}
		if mask != nil {
			req.UpdateMask = &fieldmaskpb.FieldMask{Paths: mask}
		}
		return req
	}
	everything := map[string]any{"url": "https://a.test/", "eventTypes": []string{"workspace.created"}, "description": "d", "enabled": true}
	tests := []struct {
		name string
		req  *workspacev1.UpdateWebhookRequest
		want map[string]any
	}{
		{"no mask: the populated fields", full(), everything},
		{"no mask: false is populated", &workspacev1.UpdateWebhookRequest{Enabled: proto.Bool(false)}, map[string]any{"enabled": false}},
		{"no mask: an empty list is not populated", &workspacev1.UpdateWebhookRequest{EventTypes: []string{}}, map[string]any{}},
		{"mask: every field", full("url", "event_types", "description", "enabled"), everything},
		{"mask: exactly the named fields", full("enabled"), map[string]any{"enabled": true}},
		{"mask: a named field left unset is cleared",
			&workspacev1.UpdateWebhookRequest{UpdateMask: &fieldmaskpb.FieldMask{Paths: []string{"event_types", "description", "enabled"}}},
			map[string]any{"eventTypes": []string{}, "description": "", "enabled": false}},
	}
	for _, tc := range tests {
		c, err := webhookChanges(tc.req)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if got := changes(c); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
		}
	}
	_, err := webhookChanges(full("secret"))
	if e, ok := fault.As(err); !ok || e.Kind != fault.Invalid || len(e.Fields) != 1 || e.Fields[0].Field != "updateMask" {
		t.Fatalf("an unknown path: %v", err)
	}
}

// What the API shows of an endpoint: never its secrets, an empty list
// rather than null for every type.
func TestWebhookToProto(t *testing.T) {
	w := webhookToProto(webhookdomain.Endpoint{ID: "wh", URL: "https://a.test/", SealedSecret: []byte("s"), SealedPreviousSecret: []byte("p")})
	if w.EventTypes == nil || w.GetId() != "wh" {
		t.Fatalf("%+v", w)
	}
	w.ProtoReflect().Range(func(fd protoreflect.FieldDescriptor, v protoreflect.Value) bool {
		if fmt.Sprint(v) == "s" || fmt.Sprint(v) == "p" {
			t.Errorf("%s shows a sealed secret", fd.Name())
		}
		return true
	})
}
