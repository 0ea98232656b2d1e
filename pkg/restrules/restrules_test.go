package restrules_test

import (
	"testing"

	"google.golang.org/protobuf/reflect/protoreflect"

	authv1 "github.com/liveproctor/workspaces/pkg/gen/auth/v1"
	restv1 "github.com/liveproctor/workspaces/pkg/gen/rest/v1"
	workspacev1 "github.com/liveproctor/workspaces/pkg/gen/workspace/v1"
	"github.com/liveproctor/workspaces/pkg/restrules"
)

func TestRulesOfTheProtos(t *testing.T) {
	update := (&workspacev1.UpdateWorkspaceRequest{}).ProtoReflect().Descriptor().Fields()
	for name, published := range map[string]bool{"id": true, "name": true, "parent_workspace_id": true, "update_mask": false, "etag": false} {
		if got := restrules.Published(update.ByName(protoreflect.Name(name))); got != published {
			t.Errorf("Published(%s) = %v", name, got)
		}
	}
	if !restrules.Leaf(update.ByName("parent_workspace_id").Message()) || restrules.Leaf(update.ByName("address").Message()) {
		t.Error("a StringValue is a leaf, an Address is not")
	}

	create := (&workspacev1.CreateWorkspaceRequest{}).ProtoReflect().Descriptor().Fields()
	if r := restrules.Field(create.ByName("type")); !r.GetRequired() || len(r.GetEnum()) != 2 {
		t.Errorf("create's type: %v", r)
	}
	if r := restrules.Field(create.ByName("address")); r == nil || r.GetRequired() {
		t.Errorf("a field without rules has empty ones, got %v", r)
	}

	session := authv1.File_auth_v1_auth_proto.Services().ByName("AuthService").Methods().ByName("GetSdkSession")
	if op := restrules.Operation(session); op.GetSecurity() != restv1.Security_SECURITY_BEARER || op.GetSummary() == "" {
		t.Errorf("GetSdkSession: %v", op)
	}
	internal := authv1.File_auth_v1_auth_proto.Services().ByName("AuthService").Methods().ByName("IntrospectSdkToken")
	if op := restrules.Operation(internal); op != nil {
		t.Errorf("an internal method has REST options: %v", op)
	}
}
