package server

import (
	"bytes"
	"encoding/json"
	"fmt"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/known/fieldmaskpb"
)

// updateMaskField names the field a request message carries its field mask in.
const updateMaskField protoreflect.Name = "update_mask"

// fieldMaskName is the full name of google.protobuf.FieldMask.
const fieldMaskName protoreflect.FullName = "google.protobuf.FieldMask"

// unmaskedField reports the fields that identify or guard an update rather than change
// the resource; they never enter the mask, even when the body has them.
func unmaskedField(name protoreflect.Name) bool {
	switch name {
	case updateMaskField, "workspace_id", "id", "etag":
		return true
	}
	return false
}

// fillUpdateMask sets msg's update_mask, when it has one, to the proto names
// of the top-level keys present in the JSON body, in body order. A key whose
// value is null still counts: that is how a client clears a field (for
// example "parentWorkspaceId": null). grpc-gateway does this itself only for
// PATCH; PUT /api/workspace/{workspace_id} needs it too. A mask the client
// put in the body is replaced.
func fillUpdateMask(msg proto.Message, body []byte) error {
	m := msg.ProtoReflect()
	fields := m.Descriptor().Fields()
	maskField := fields.ByName(updateMaskField)
	if maskField == nil || maskField.Message() == nil ||
		maskField.Message().FullName() != fieldMaskName {
		return nil
	}
	keys, err := topLevelKeys(body)
	if err != nil {
		return err
	}
	mask := &fieldmaskpb.FieldMask{Paths: []string{}}
	seen := make(map[protoreflect.Name]bool, len(keys))
	for _, key := range keys {
		fd := fields.ByJSONName(key)
		if fd == nil {
			fd = fields.ByTextName(key)
		}
		if fd == nil || unmaskedField(fd.Name()) || seen[fd.Name()] {
			continue
		}
		seen[fd.Name()] = true
		mask.Paths = append(mask.Paths, string(fd.Name()))
	}
	m.Set(maskField, protoreflect.ValueOfMessage(mask.ProtoReflect()))
	return nil
}

// topLevelKeys returns the keys of the JSON object in body, in order. An
// empty body has none.
func topLevelKeys(body []byte) ([]string, error) {
	if len(bytes.TrimSpace(body)) == 0 {
		return nil, nil
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return nil, fmt.Errorf("invalid request body: not a JSON object")
	}
	var keys []string
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, fmt.Errorf("invalid request body: %w", err)
		}
		key, ok := tok.(string)
		if !ok {
			return nil, fmt.Errorf("invalid request body: object key expected")
		}
		var skip json.RawMessage
		if err := dec.Decode(&skip); err != nil {
			return nil, fmt.Errorf("invalid request body: %w", err)
		}
		keys = append(keys, key)
	}
	return keys, nil
}
