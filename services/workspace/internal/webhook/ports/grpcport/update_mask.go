package grpcport

import (
	"google.golang.org/protobuf/reflect/protoreflect"

	workspacev1 "github.com/liveproctor/workspaces/pkg/gen/workspace/v1"
	"github.com/liveproctor/workspaces/services/workspace/internal/ports/grpccall"
	webhookdomain "github.com/liveproctor/workspaces/services/workspace/internal/webhook/domain"
)

// updatable are the fields of an UpdateWebhookRequest that change the
// endpoint, by the proto names an update_mask lists them by (AIP-161).
var updatable = []protoreflect.Name{"url", "event_types", "description", "enabled"}

// webhookChanges is what an update request asks to change, as the
// workspace's update reads its own: with an update_mask, exactly the
// fields it names change, and a named field left unset is cleared (the
// event types to every type, enabled to false); without one, the fields
// the request populates change. Only gRPC callers send none, since the
// gateway fills the mask from the body's keys.
func webhookChanges(req *workspacev1.UpdateWebhookRequest) (webhookdomain.Changes, error) {
	set, err := grpccall.MaskedFields(req.ProtoReflect(), req.GetUpdateMask(), updatable)
	if err != nil {
		return webhookdomain.Changes{}, err
	}
	var c webhookdomain.Changes
	if set["url"] {
		url := req.GetUrl()
		c.URL = &url
	}
	if set["event_types"] {
		types := append([]string{}, req.GetEventTypes()...)
		c.EventTypes = &types
	}
	if set["description"] {
		description := req.GetDescription()
		c.Description = &description
	}
	if set["enabled"] {
		enabled := req.GetEnabled()
		c.Enabled = &enabled
	}
	return c, nil
}
