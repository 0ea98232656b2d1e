package grpcport

import (
	"fmt"
	"slices"

	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/liveproctor/workspaces/pkg/clip"
	"github.com/liveproctor/workspaces/pkg/fault"
	workspacev1 "github.com/liveproctor/workspaces/pkg/gen/workspace/v1"
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
	set := map[protoreflect.Name]bool{}
	if mask := req.GetUpdateMask(); mask != nil {
		for _, path := range mask.GetPaths() {
			if !slices.Contains(updatable, protoreflect.Name(path)) {
				return webhookdomain.Changes{}, fault.InvalidField("updateMask", fmt.Sprintf("%q is not an updatable field", clip.Runes(path, 64)))
			}
			set[protoreflect.Name(path)] = true
		}
	} else {
		m := req.ProtoReflect()
		for _, name := range updatable {
			set[name] = m.Has(m.Descriptor().Fields().ByName(name))
		}
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
