package restcheck

import (
	"bytes"
	"io"
	"regexp"
	"strings"
	"unicode"

	"github.com/grpc-ecosystem/grpc-gateway/v2/runtime"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"

	"github.com/liveproctor/workspaces/gateway/internal/httperr"
	"github.com/liveproctor/workspaces/gateway/internal/reqstate"
	"github.com/liveproctor/workspaces/pkg/restrules"
)

// JSONMarshaler renders responses like runtime.JSONPb and decodes request
// bodies more strictly: the whole (size-capped) body must be one JSON
// object naming only the request message's documented fields
// (bodycheck.go), with nothing after it. Decoding also fills update masks
// from the body's keys (updatemask.go).
type JSONMarshaler struct {
	*runtime.JSONPb
}

// NewJSONMarshaler returns the gateway's only marshaler. It renders as
// restrules.JSON says: unset fields too (so a missing parent reads as
// null), under their JSON names; proto3 optional fields, such as
// deletedAt, are left out while unset.
func NewJSONMarshaler() *JSONMarshaler {
	return &JSONMarshaler{JSONPb: &runtime.JSONPb{
		MarshalOptions:   restrules.JSON,
		UnmarshalOptions: protojson.UnmarshalOptions{DiscardUnknown: false},
	}}
}

// NewDecoder returns a decoder reading all of r. An empty body decodes as
// io.EOF, which the generated handlers treat as "no body".
func (m *JSONMarshaler) NewDecoder(r io.Reader) runtime.Decoder {
	return runtime.DecoderFunc(func(v any) error { return m.decode(r, v) })
}

func (m *JSONMarshaler) decode(r io.Reader, v any) error {
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
	// flatten to text, to the error answer.
	state := reqstate.FromBody(r)
	var bound map[string]string
	if state != nil {
		bound = state.PathParams
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
			state.DecodeErr = de
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

// Violation is the field the error answer blames, if any, and what is
// wrong with it.
func (e *decodeError) Violation() (field, description string) { return e.field, e.description }

// fieldDecodeError is a decodeError blaming field, under context ("invalid
// request body"). problem is the gateway's own text; got is the caller's
// value, or "". The caller's text is quoted once, bounded (echo): got only
// in the detail's description, and field in the message too only when it is
// published, made of the API's own names (an unknown field's name is the
// caller's, and only the detail names it).
func fieldDecodeError(context, field string, published bool, problem, got string) *decodeError {
	e := &decodeError{field: httperr.Echo(field), description: problem, message: context + ": " + problem}
	if got != "" {
		e.description += ", got " + httperr.Echo(got)
	}
	if published {
		e.message = context + ": " + field + ": " + problem
	}
	return e
}

// protojsonValue matches protojson's text for a value it cannot take, such
// as an integer out of range: `invalid value for int32 field pageSize: 1.5`.
var protojsonValue = regexp.MustCompile(`invalid value for (\w+) field ([\w.]+): `)

// newDecodeError turns a protojson error into a decodeError. checkBody has
// already refused unknown fields, values of the wrong JSON type and invalid
// UTF-8, so what is left are values protojson cannot take. protojson
// exposes no structured errors, so the field, by its JSON name, is read
// from the text; its other texts (line and column, parser terms) are not
// passed on.
func newDecodeError(err error) *decodeError {
	text := err.Error()
	if m := protojsonValue.FindStringSubmatchIndex(text); m != nil {
		kind, name, value := text[m[2]:m[3]], text[m[4]:m[5]], text[m[1]:]
		if isPublishedPath(name) {
			return fieldDecodeError("invalid request body", name, true, "expected "+kindText(kind), value)
		}
	}
	return &decodeError{message: "invalid request body: a value is not valid"}
}

// isPublishedPath reports whether a field name from protojson's text is
// made of JSON name characters only, so quoting it in a message is safe.
func isPublishedPath(name string) bool {
	return name != "" && len(name) <= 200 && strings.IndexFunc(name, func(r rune) bool {
		return !(r == '.' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r)) || r > unicode.MaxASCII
	}) < 0
}

// kindText names a proto kind as a JSON value: int32 is an integer.
func kindText(kind string) string {
	switch kind {
	case "int32", "int64", "uint32", "uint64", "sint32", "sint64", "fixed32", "fixed64", "sfixed32", "sfixed64":
		return "an integer in range"
	case "float", "double":
		return "a number"
	case "bool":
		return "true or false"
	case "enum":
		return "one of the documented values"
	case "string":
		return "a string"
	case "bytes":
		return "base64"
	}
	return "a valid value"
}
