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
// object of the request message, with no unknown fields and nothing after
// it. Decoding also fills update masks from the body's keys (updatemask.go).
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
	if len(bytes.TrimSpace(data)) == 0 {
		if err := fillUpdateMask(msg, nil); err != nil {
			return err
		}
		return io.EOF
	}
	if err := m.UnmarshalOptions.Unmarshal(data, msg); err != nil {
		de := newDecodeError(err)
		recordDecodeError(r, de)
		return de
	}
	return fillUpdateMask(msg, data)
}

// decodeError explains why a request body could not be decoded, naming the
// offending field when protojson's message does.
type decodeError struct {
	field       string
	description string
	message     string
}

func (e *decodeError) Error() string { return e.message }

// newDecodeError turns a protojson error into a decodeError. protojson
// exposes no structured errors, so the field is read from its message:
// `unknown field "x"`, `duplicate field "x"`, `invalid value for string field x: 5`.
func newDecodeError(err error) *decodeError {
	text := strings.TrimLeftFunc(strings.TrimPrefix(err.Error(), "proto:"), unicode.IsSpace)
	e := &decodeError{message: "invalid request body: " + text}
	for _, problem := range []string{"unknown field", "duplicate field"} {
		if field := quotedAfter(text, problem+" "); field != "" {
			e.field, e.description = field, problem
			return e
		}
	}
	if _, rest, ok := strings.Cut(text, "invalid value for "); ok {
		if kind, after, ok := strings.Cut(rest, " field "); ok {
			if name, value, ok := strings.Cut(after, ": "); ok {
				e.field, e.description = name, fmt.Sprintf("expected %s, got %s", kind, value)
			}
		}
	}
	return e
}

// quotedAfter returns the double-quoted word following marker in text, or "".
func quotedAfter(text, marker string) string {
	_, rest, ok := strings.Cut(text, marker+`"`)
	if !ok {
		return ""
	}
	word, _, ok := strings.Cut(rest, `"`)
	if !ok {
		return ""
	}
	return word
}
