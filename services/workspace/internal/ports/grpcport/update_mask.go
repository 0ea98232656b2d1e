package grpcport

import (
	"google.golang.org/protobuf/reflect/protoreflect"

	workspacev1 "github.com/liveproctor/workspaces/pkg/gen/workspace/v1"
	"github.com/liveproctor/workspaces/services/workspace/internal/domain"
	"github.com/liveproctor/workspaces/services/workspace/internal/ports/grpccall"
)

// updatable are the fields of an UpdateWorkspaceRequest that change the
// workspace, by the proto names an update_mask lists them by (AIP-161).
var updatable = []protoreflect.Name{"name", "type", "parent_workspace_id", "address", "products", "objective_documents", "rate_limit"}

// updateChanges is what an update request asks to change. With an
// update_mask, exactly the fields it names change, and a named field left
// unset is cleared (a list by an empty one, as domain.Changes says).
// Without one, the fields the request populates change; only gRPC callers
// send none, since the gateway fills the mask from the body's keys.
func updateChanges(req *workspacev1.UpdateWorkspaceRequest) (domain.Changes, error) {
	set, err := grpccall.MaskedFields(req.ProtoReflect(), req.GetUpdateMask(), updatable)
	if err != nil {
		return domain.Changes{}, err
	}
	var c domain.Changes
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
		address := addressFromProto(req.GetAddress())
		c.Address = &address
	}
	if set["products"] {
		products := productsFromProto(req.GetProducts())
		c.Products = &products
	}
	if set["objective_documents"] {
		docs := req.GetObjectiveDocuments()
		c.ObjectiveDocuments = &docs
	}
	if set["rate_limit"] {
		c.RateLimit = rateLimitFromProto(req.GetRateLimit())
		c.RemoveRateLimit = c.RateLimit == nil
	}
	return c, nil
}
