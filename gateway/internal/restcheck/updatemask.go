package restcheck

import (
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/known/fieldmaskpb"
)

// updateMaskField names the field a request message carries its field mask in.
const updateMaskField protoreflect.Name = "update_mask"

// fieldMaskName is the full name of google.protobuf.FieldMask.
const fieldMaskName protoreflect.FullName = "google.protobuf.FieldMask"

// fillUpdateMask sets msg's update_mask, when it has one, to the proto names
// of the body's top-level fields (as checkBody found them), in body order,
// except those bound to the path (bound, by proto name): they identify the
// resource rather than change it. A key whose value is null still counts:
// that is how a client clears a field ("parentWorkspaceId": null). Which
// fields a mask may name, and what it means, is the service's to say.
// grpc-gateway fills masks itself only for PATCH; PUT /api/workspace/{id}
// needs one too. The mask is hidden from REST, so a body cannot hold its
// own.
func fillUpdateMask(msg proto.Message, top []protoreflect.FieldDescriptor, bound map[string]string) {
	m := msg.ProtoReflect()
	fields := m.Descriptor().Fields()
	maskField := fields.ByName(updateMaskField)
	if maskField == nil || maskField.Message() == nil ||
		maskField.Message().FullName() != fieldMaskName {
		return
	}
	mask := &fieldmaskpb.FieldMask{Paths: make([]string, 0, len(top))}
	for _, fd := range top {
		name := string(fd.Name())
		if _, isBound := bound[name]; !isBound {
			mask.Paths = append(mask.Paths, name)
		}
	}
	m.Set(maskField, protoreflect.ValueOfMessage(mask.ProtoReflect()))
}
