package grpccall

import (
	"fmt"
	"slices"

	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/known/fieldmaskpb"

	"github.com/liveproctor/workspaces/pkg/clip"
	"github.com/liveproctor/workspaces/pkg/fault"
)

// MaskedFields is which of the updatable fields of the update request m
// change (AIP-161). With a mask, exactly the fields it names, and a path
// outside updatable is refused; without one, the fields m populates. Only
// gRPC callers send no mask, since the gateway fills it from the body's
// keys.
func MaskedFields(m protoreflect.Message, mask *fieldmaskpb.FieldMask, updatable []protoreflect.Name) (map[protoreflect.Name]bool, error) {
	set := map[protoreflect.Name]bool{}
	if mask == nil {
		for _, name := range updatable {
			set[name] = m.Has(m.Descriptor().Fields().ByName(name))
		}
		return set, nil
	}
	for _, path := range mask.GetPaths() {
		if !slices.Contains(updatable, protoreflect.Name(path)) {
			return nil, fault.InvalidField("updateMask", fmt.Sprintf("%q is not an updatable field", clip.Runes(path, 64)))
		}
		set[protoreflect.Name(path)] = true
	}
	return set, nil
}
