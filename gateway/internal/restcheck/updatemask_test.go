package restcheck

import (
	"slices"
	"testing"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"

	workspacev1 "github.com/liveproctor/workspaces/pkg/gen/workspace/v1"
)

func TestFillUpdateMask(t *testing.T) {
	fields := (&workspacev1.UpdateWorkspaceRequest{}).ProtoReflect().Descriptor().Fields()
	top := func(names ...protoreflect.Name) []protoreflect.FieldDescriptor {
		out := make([]protoreflect.FieldDescriptor, len(names))
		for i, n := range names {
			out[i] = fields.ByName(n)
		}
		return out
	}
	tests := []struct {
		name  string
		top   []protoreflect.FieldDescriptor
		bound map[string]string
		want  []string
	}{
		{"body order", top("objective_documents", "name", "parent_workspace_id"), nil,
			[]string{"objective_documents", "name", "parent_workspace_id"}},
		{"fields bound to the path are left out", top("id", "name"), map[string]string{"id": "w1"}, []string{"name"}},
		{"a nested binding leaves its top-level field in", top("address"), map[string]string{"address.city": "x"}, []string{"address"}},
		{"no body: an empty mask, not none", nil, map[string]string{"id": "w1"}, []string{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req := &workspacev1.UpdateWorkspaceRequest{}
			fillUpdateMask(req, tt.top, tt.bound)
			if req.GetUpdateMask() == nil || !slices.Equal(req.GetUpdateMask().GetPaths(), tt.want) {
				t.Errorf("mask %v, want paths %q", req.GetUpdateMask(), tt.want)
			}
		})
	}

	// A request without an update_mask field is left alone.
	create := &workspacev1.CreateWorkspaceRequest{Name: "n"}
	before := proto.Clone(create)
	fillUpdateMask(create, []protoreflect.FieldDescriptor{create.ProtoReflect().Descriptor().Fields().ByName("name")}, nil)
	if !proto.Equal(create, before) {
		t.Errorf("create request changed: %v", create)
	}
}
