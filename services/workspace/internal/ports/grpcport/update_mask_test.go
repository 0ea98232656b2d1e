package grpcport

import (
	"reflect"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/fieldmaskpb"
	"google.golang.org/protobuf/types/known/wrapperspb"

	"github.com/liveproctor/workspaces/pkg/clip"
	"github.com/liveproctor/workspaces/pkg/fault"
	workspacev1 "github.com/liveproctor/workspaces/pkg/gen/workspace/v1"
	"github.com/liveproctor/workspaces/services/workspace/internal/domain"
)

// changed lists what c changes, by domain field, with the new values.
func changed(c domain.Changes) map[string]any {
	out := map[string]any{}
	if c.Name != nil {
		out["name"] = *c.Name
	}
	if c.Type != nil {
		out["type"] = *c.Type
	}
	if c.ParentID != nil {
		out["parent"] = *c.ParentID
	}
	if c.Address != nil {
		out["address"] = *c.Address
	}
	if c.Products != nil {
		out["products"] = *c.Products
	}
	if c.ObjectiveDocuments != nil {
		out["objectiveDocuments"] = *c.ObjectiveDocuments
	}
	return out
}

func TestUpdateChanges(t *testing.T) {
	full := func(mask ...string) *workspacev1.UpdateWorkspaceRequest {
		req := &workspacev1.UpdateWorkspaceRequest{
			Id:                 "w",
			Name:               proto.String("N"),
			Type:               proto.String("CAMPUS"),
			ParentWorkspaceId:  wrapperspb.String("p"),
			Address:            &workspacev1.Address{City: "Austin"},
			Products:           []*workspacev1.Product{{Bank: &workspacev1.Bank{Id: "pub/math"}}},
			ObjectiveDocuments: []string{"A#B#C:2020"},
		}
		if mask != nil {
			req.UpdateMask = &fieldmaskpb.FieldMask{Paths: mask}
		}
		return req
	}
	everything := map[string]any{
		"name": "N", "type": domain.TypeCampus, "parent": "p", "address": domain.Address{City: "Austin"},
		"products": []string{"pub/math"}, "objectiveDocuments": []string{"A#B#C:2020"},
	}
	tests := []struct {
		name string
		req  *workspacev1.UpdateWorkspaceRequest
		want map[string]any
	}{
		{"no mask: the populated fields", full(), everything},
		{"no mask: only the populated fields", &workspacev1.UpdateWorkspaceRequest{Name: proto.String(""), Address: &workspacev1.Address{}},
			map[string]any{"name": "", "address": domain.Address{}}},
		{"no mask: empty lists are not populated", &workspacev1.UpdateWorkspaceRequest{Products: []*workspacev1.Product{}, ObjectiveDocuments: []string{}},
			map[string]any{}},
		{"no mask: an empty parent clears it", &workspacev1.UpdateWorkspaceRequest{ParentWorkspaceId: wrapperspb.String("")},
			map[string]any{"parent": ""}},
		{"no mask, nothing populated", &workspacev1.UpdateWorkspaceRequest{Id: "w"}, map[string]any{}},
		{"mask: every field", full("name", "type", "parent_workspace_id", "address", "products", "objective_documents"), everything},
		{"mask: exactly the named fields", full("products", "name"), map[string]any{"name": "N", "products": []string{"pub/math"}}},
		{"mask: a named field left unset is cleared",
			&workspacev1.UpdateWorkspaceRequest{UpdateMask: &fieldmaskpb.FieldMask{Paths: []string{"parent_workspace_id", "address", "products", "objective_documents"}}},
			map[string]any{"parent": "", "address": domain.Address{}, "products": []string{}, "objectiveDocuments": []string(nil)}},
		{"mask: a field named twice", full("name", "name"), map[string]any{"name": "N"}},
		{"mask: empty changes nothing", full([]string{}...), map[string]any{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := updateChanges(tt.req)
			if err != nil {
				t.Fatal(err)
			}
			if got := changed(c); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("changes = %#v, want %#v", got, tt.want)
			}
		})
	}
}

// A mask names fields by proto name only, and only the fields an update
// changes.
func TestUpdateMaskRefusesOtherPaths(t *testing.T) {
	for _, path := range []string{"parentWorkspaceId", "objectiveDocuments", "address.city", "id", "etag", "update_mask", "", strings.Repeat("x", 100)} {
		_, err := updateChanges(&workspacev1.UpdateWorkspaceRequest{Name: proto.String("N"), UpdateMask: &fieldmaskpb.FieldMask{Paths: []string{"name", path}}})
		e, ok := fault.As(err)
		if !ok || e.Kind != fault.Invalid || len(e.Fields) != 1 || e.Fields[0].Field != "updateMask" ||
			!strings.HasPrefix(e.Fields[0].Description, `"`+clip.Runes(path, 64)+`" is not`) {
			t.Errorf("path %.20q: error %v, want the updateMask field named", path, err)
		}
	}
}

// A list is cleared by an empty one (domain.Changes): over gRPC, a mask that
// names products with none in the request clears them; without a mask, an
// empty list is not populated and changes nothing.
func TestUpdateClearsAListTheMaskNamesAndSendsEmpty(t *testing.T) {
	ctx, s := rootServer(t)
	if _, err := s.CreateWorkspace(ctx, &workspacev1.CreateWorkspaceRequest{Id: "a", Name: "A", Type: "CAMPUS",
		Products: []*workspacev1.Product{{Bank: &workspacev1.Bank{Id: "pub/math"}}}}); err != nil {
		t.Fatal(err)
	}
	update := func(req *workspacev1.UpdateWorkspaceRequest) *workspacev1.Workspace {
		t.Helper()
		w, err := s.UpdateWorkspace(ctx, req)
		if err != nil {
			t.Fatal(err)
		}
		return w
	}
	if w := update(&workspacev1.UpdateWorkspaceRequest{Id: "a", Products: []*workspacev1.Product{}}); len(w.GetProducts()) != 1 {
		t.Errorf("no mask, empty list: products %v, want pub/math kept", w.GetProducts())
	}
	masked := &workspacev1.UpdateWorkspaceRequest{Id: "a", UpdateMask: &fieldmaskpb.FieldMask{Paths: []string{"products"}}}
	if w := update(masked); len(w.GetProducts()) != 0 {
		t.Errorf("mask names products, none sent: products %v, want none", w.GetProducts())
	}
}
