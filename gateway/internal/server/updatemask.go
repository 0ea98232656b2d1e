package server

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
// of the body's top-level fields (as checkBody found them), in body order. A key whose value is null still counts: that is how a client clears
// a field (for example "parentWorkspaceId": null). Fields bound to the path
// (bound, by proto name) identify the resource rather than change it, so
// they never enter the mask. grpc-gateway does this itself only for PATCH;
// PUT /api/workspace/{id} needs it too. The mask is hidden from REST, so
// the body cannot hold one of its own.
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
