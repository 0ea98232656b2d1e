package grpcport

import (
	"fmt"

	"github.com/liveproctor/workspaces/pkg/fault"
	workspacev1 "github.com/liveproctor/workspaces/pkg/gen/workspace/v1"
	"github.com/liveproctor/workspaces/services/workspace/internal/app"
	"github.com/liveproctor/workspaces/services/workspace/internal/domain"
)

// updatable maps the update_mask paths (proto names, or the JSON names REST
// callers know) to the field they change.
var updatable = map[string]string{
	"name": "name", "type": "type",
	"parent_workspace_id": "parent_workspace_id", "parentWorkspaceId": "parent_workspace_id",
	"address":             "address",
	"products":            "products",
	"objective_documents": "objective_documents", "objectiveDocuments": "objective_documents",
}

// updateInput turns a request into the use case's input. With an
// update_mask, exactly the named fields change (a named field left unset
// clears it). Without one (gRPC callers only; REST always sends a mask), the
// fields the request populates change.
func updateInput(req *workspacev1.UpdateWorkspaceRequest, cond app.Precondition) (app.UpdateInput, error) {
	in := app.UpdateInput{ID: req.GetId(), Precondition: cond}
	set := map[string]bool{}
	if mask := req.GetUpdateMask(); mask != nil {
		for _, p := range mask.GetPaths() {
			field, ok := updatable[p]
			if !ok {
				return app.UpdateInput{}, fault.InvalidField("updateMask", fmt.Sprintf("%q is not an updatable field", truncate(p, 64)))
			}
			set[field] = true
		}
	} else {
		set["name"] = req.Name != nil
		set["type"] = req.Type != nil
		set["parent_workspace_id"] = req.GetParentWorkspaceId() != nil
		set["address"] = req.GetAddress() != nil
		set["products"] = len(req.GetProducts()) > 0
		set["objective_documents"] = len(req.GetObjectiveDocuments()) > 0
	}
	c := &in.Changes
	if set["name"] {
		name := req.GetName()
		c.Name = &name
	}
	if set["type"] {
		typ := domain.Type(req.GetType())
		c.Type = &typ
	}
	if set["parent_workspace_id"] {
		parent := req.GetParentWorkspaceId().GetValue()
		c.ParentID = &parent
	}
	if set["address"] {
		addr := addressFromProto(req.GetAddress())
		c.Address = &addr
	}
	if set["products"] {
		products := productsFromProto(req.GetProducts())
		c.Products = &products
	}
	if set["objective_documents"] {
		docs := req.GetObjectiveDocuments()
		c.ObjectiveDocuments = &docs
	}
	return in, nil
}

func truncate(s string, n int) string {
	if r := []rune(s); len(r) > n {
		return string(r[:n]) + "…"
	}
	return s
}
