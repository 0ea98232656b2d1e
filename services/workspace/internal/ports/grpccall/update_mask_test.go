package grpccall

import (
	"maps"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/known/fieldmaskpb"

	"github.com/liveproctor/workspaces/pkg/fault"
	workspacev1 "github.com/liveproctor/workspaces/pkg/gen/workspace/v1"
)

func TestMaskedFields(t *testing.T) {
	updatable := []protoreflect.Name{"url", "event_types", "description", "enabled"}
	req := &workspacev1.UpdateWebhookRequest{Id: "w", Url: proto.String("https://example.com/hook"), Enabled: proto.Bool(false)}
	tests := []struct {
		name string
		mask *fieldmaskpb.FieldMask
		want map[protoreflect.Name]bool
	}{
		// Without a mask, a populated field changes, even to its zero value.
		{"no mask", nil, map[protoreflect.Name]bool{"url": true, "event_types": false, "description": false, "enabled": true}},
		// With one, exactly what it names, populated or not.
		{"mask", &fieldmaskpb.FieldMask{Paths: []string{"description", "enabled"}}, map[protoreflect.Name]bool{"description": true, "enabled": true}},
		{"empty mask", &fieldmaskpb.FieldMask{}, map[protoreflect.Name]bool{}},
	}
	for _, tt := range tests {
		got, err := MaskedFields(req.ProtoReflect(), tt.mask, updatable)
		if err != nil || !maps.Equal(got, tt.want) {
			t.Errorf("%s: MaskedFields = %v, %v, want %v", tt.name, got, err, tt.want)
		}
	}
}

// A path outside the updatable fields (the request's id, or one it does not
// have) is an Invalid updateMask, quoting the path clipped.
func TestMaskedFieldsRefusesUnknownPaths(t *testing.T) {
	updatable := []protoreflect.Name{"url"}
	for _, path := range []string{"id", "url.host", "", strings.Repeat("x", 100)} {
		_, err := MaskedFields((&workspacev1.UpdateWebhookRequest{}).ProtoReflect(), &fieldmaskpb.FieldMask{Paths: []string{"url", path}}, updatable)
		e, ok := fault.As(err)
		if !ok || e.Kind != fault.Invalid || len(e.Fields) != 1 || e.Fields[0].Field != "updateMask" ||
			!strings.Contains(e.Message, "is not an updatable field") || len(e.Message) > 120 {
			t.Errorf("path %.20q: error %v, want an Invalid updateMask error", path, err)
		}
	}
}
