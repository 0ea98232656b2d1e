package grpcport

import (
	"maps"
	"slices"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/known/fieldmaskpb"
	"google.golang.org/protobuf/types/known/wrapperspb"

	"github.com/liveproctor/workspaces/pkg/fault"
	workspacev1 "github.com/liveproctor/workspaces/pkg/gen/workspace/v1"
	"github.com/liveproctor/workspaces/services/workspace/internal/ports/grpccall"
)

// maskFields maps the update mask's proto names to the domain's fields.
var maskFields = map[string]string{
	"name": "name", "type": "type", "parent_workspace_id": "parent", "address": "address",
	"products": "products", "objective_documents": "objectiveDocuments",
}

// Whatever a gRPC caller sends as an update, as it arrives on the wire:
// updateChanges answers the Invalid updateMask error, with a short message,
// or changes exactly the fields the mask names (the populated ones without
// a mask); and the domain's check of those changes, renamed for the API,
// is nil or Invalid.
func FuzzUpdateChanges(f *testing.F) {
	for _, req := range []*workspacev1.UpdateWorkspaceRequest{
		{Id: "w", Name: proto.String("N")},
		{Id: "w", Name: proto.String("N"), UpdateMask: &fieldmaskpb.FieldMask{Paths: []string{"name", "type"}}},
		{Id: "w", ParentWorkspaceId: wrapperspb.String(""), UpdateMask: &fieldmaskpb.FieldMask{Paths: []string{"parent_workspace_id"}}},
		{Id: "w", UpdateMask: &fieldmaskpb.FieldMask{Paths: []string{"id", strings.Repeat("é", 100)}}},
		{Id: "w", UpdateMask: &fieldmaskpb.FieldMask{}},
		{Id: "w", Address: &workspacev1.Address{City: "Austin", State: "US-TX", Country: "US"},
			Products:           []*workspacev1.Product{{Bank: &workspacev1.Bank{Id: "pub/math"}}, {}},
			ObjectiveDocuments: []string{"A#B#C:2020", "x"}},
	} {
		wire, err := proto.Marshal(req)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(wire)
	}
	f.Fuzz(func(t *testing.T, wire []byte) {
		var req workspacev1.UpdateWorkspaceRequest
		if proto.Unmarshal(wire, &req) != nil {
			return // gRPC refuses it before the service
		}
		c, err := updateChanges(&req)
		if err != nil {
			e, ok := fault.As(err)
			if !ok || e.Kind != fault.Invalid || len(e.Fields) != 1 || e.Fields[0].Field != "updateMask" || len(e.Message) > 200 {
				t.Fatalf("updateChanges(%v) = %v, want a short Invalid updateMask error", &req, err)
			}
			return
		}
		var want []string
		if mask := req.GetUpdateMask(); mask != nil {
			for _, p := range mask.GetPaths() {
				want = append(want, maskFields[p])
			}
		} else {
			m := req.ProtoReflect()
			for p, field := range maskFields {
				if m.Has(m.Descriptor().Fields().ByName(protoreflect.Name(p))) {
					want = append(want, field)
				}
			}
		}
		slices.Sort(want)
		if got := slices.Sorted(maps.Keys(changed(c))); !slices.Equal(got, slices.Compact(want)) {
			t.Fatalf("updateChanges(%v) changes %q, want %q", &req, got, want)
		}
		if _, err := c.Check(); err != nil {
			if e, ok := fault.As(grpccall.Error(err)); !ok || e.Kind != fault.Invalid || len(e.Fields) == 0 {
				t.Fatalf("the changes of %v: %v, want Invalid", &req, err)
			}
		}
	})
}
