package server

import (
	"bytes"
	"fmt"
	"io"
	"strings"
	"unicode"

	"github.com/grpc-ecosystem/grpc-gateway/v2/runtime"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
)

// jsonMarshaler renders responses like runtime.JSONPb and decodes request
// bodies more strictly: the whole (size-capped) body must be one JSON
// object naming only the request message's documented fields
// (bodycheck.go), with nothing after it. Decoding also fills update masks
// from the body's keys (updatemask.go).
type jsonMarshaler struct {
	*runtime.JSONPb
}

// newJSONMarshaler returns the gateway's only marshaler. Unset fields are
// rendered (so a missing parent reads as null) under their JSON names;
// proto3 optional fields, such as deletedAt, are left out while unset.
func newJSONMarshaler() *jsonMarshaler {
	return &jsonMarshaler{JSONPb: &runtime.JSONPb{
		MarshalOptions:   protojson.MarshalOptions{EmitUnpopulated: true, UseProtoNames: false},
		UnmarshalOptions: protojson.UnmarshalOptions{DiscardUnknown: false},
	}}
}

// NewDecoder returns a decoder reading all of r. An empty body decodes as
// io.EOF, which the generated handlers treat as "no body".
func (m *jsonMarshaler) NewDecoder(r io.Reader) runtime.Decoder {
	return runtime.DecoderFunc(func(v any) error { return m.decode(r, v) })
}

func (m *jsonMarshaler) decode(r io.Reader, v any) error {
	data, err := io.ReadAll(r)
	if err != nil {
		return err
	}
	msg, isProto := v.(proto.Message)
	if !isProto {
		return m.JSONPb.Unmarshal(data, v)
	}
	// The request's state, when r is its body, holds the path parameters
	// and takes the reason for a refusal, which the generated handlers
	// flatten to text, to the error handler.
	state := bodyState(r)
	var bound map[string]string
	if state != nil {
		bound = state.pathParams
	}
	if len(bytes.TrimSpace(data)) == 0 {
		fillUpdateMask(msg, nil, bound)
		return io.EOF
	}
	top, de := checkBody(data, msg.ProtoReflect().Descriptor(), bound)
	if de == nil {
		if err := m.UnmarshalOptions.Unmarshal(data, msg); err != nil {
			de = newDecodeError(err)
		}
	}
	if de != nil {
		if state != nil {
			state.decodeErr = de
		}
		return de
	}
	fillUpdateMask(msg, top, bound)
	return nil
}

// decodeError explains why a request body or query could not be decoded,
// naming the offending field when it can.
type decodeError struct {
	field       string
	description string
	message     string
}

func (e *decodeError) Error() string { return e.message }

// newDecodeError turns a protojson error into a decodeError. checkBody has
// already refused unknown fields and values of the wrong JSON type, so what
// is left are values protojson cannot take, such as an integer out of
// range: `invalid value for int32 field pageSize: 1.5`. protojson exposes no
// structured errors, so the field, by its JSON name, is read from the text.
func newDecodeError(err error) *decodeError {
	text := strings.TrimLeftFunc(strings.TrimPrefix(err.Error(), "proto:"), unicode.IsSpace)
	e := &decodeError{message: "invalid request body: " + text}
	if _, rest, ok := strings.Cut(text, "invalid value for "); ok {
		if kind, after, ok := strings.Cut(rest, " field "); ok {
			if name, value, ok := strings.Cut(after, ": "); ok {
				e.field, e.description = name, fmt.Sprintf("expected %s, got %s", kind, value)
			}
		}
	}
	return e
}
