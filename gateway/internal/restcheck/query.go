package restcheck

import (
	"encoding/base64"
	"errors"
	"fmt"
	"math"
	"net/http"
	"net/url"
	"strconv"
	"unicode/utf8"

	"github.com/grpc-ecosystem/grpc-gateway/v2/runtime"
	"github.com/grpc-ecosystem/grpc-gateway/v2/utilities"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/liveproctor/workspaces/gateway/internal/httperr"
	"github.com/liveproctor/workspaces/gateway/internal/reqstate"
	"github.com/liveproctor/workspaces/pkg/restrules"
)

// QueryParser fills a request message from the query string as the API
// documents it, in place of grpc-gateway's parser, which takes proto names
// as well as JSON names, cannot reach a JSON name containing a dot
// (filter.address.state.include) and ignores what it does not know.
//
// Each key is a path of JSON names, matched greedily: at each level the
// longest run of dot-separated segments that is a field's JSON name. The
// path must end at a scalar or enum field that is neither hidden nor bound
// to the path, and only a repeated field may be given more than once.
type QueryParser struct{}

var _ runtime.QueryParameterParser = QueryParser{}

// queryErrorKey is where Parse leaves the refused parameter in the form it
// was given: grpc-gateway hands the parser only the request's form and
// flattens its error to text, so this is how the parameter's name reaches
// the error handler (see NoteQueryError). A client's own parameter of that
// name is no JSON name, so Parse refuses it and writes over it.
const queryErrorKey = "\x00query error"

// Parse sets msg's fields from values. filter holds the proto field paths
// bound to the request path. On failure it reports the refused parameter
// whose name sorts first, so the answer does not depend on map order.
func (QueryParser) Parse(msg proto.Message, values url.Values, filter *utilities.DoubleArray) error {
	m := msg.ProtoReflect()
	var refused *decodeError
	refusedKey := ""
	for key, vals := range values {
		problem, got := setQueryParameter(m, key, vals, filter)
		if problem != "" && (refused == nil || key < refusedKey) {
			refused, refusedKey = queryError(key, problem, got), key
		}
	}
	if refused == nil {
		return nil
	}
	values[queryErrorKey] = []string{refused.field, refused.description, refused.message}
	return refused
}

// queryError is a decodeError for the query parameter key: problem is the
// gateway's text, got the caller's value or "". The key is a published name
// unless the parameter is unknown.
func queryError(key, problem, got string) *decodeError {
	return fieldDecodeError("invalid query parameter", key, problem != unknownQueryParameter, problem, got)
}

// NoteQueryError moves a parameter refused by QueryParser from r's form to
// r's state, where the error handler finds it as it finds body errors; only
// when err is that refusal, since a form that failed to parse never reached
// Parse and may hold a client's key of that name.
func NoteQueryError(r *http.Request, err error) {
	if v := r.Form[queryErrorKey]; len(v) == 3 && status.Convert(err).Message() == v[2] {
		reqstate.From(r.Context()).DecodeErr = &decodeError{field: v[0], description: v[1], message: v[2]}
	}
}

// unknownQueryParameter describes a parameter the operation does not take.
const unknownQueryParameter = "unknown query parameter"

// maxQueryDepth bounds how many message levels a query key may cross; the
// API's deepest (filter.address.state.include) crosses three.
const maxQueryDepth = 8

// setQueryParameter sets the field key names in m to vals, and says what is
// wrong when it cannot (problem "" when nothing is), with the value at
// fault.
func setQueryParameter(m protoreflect.Message, key string, vals []string, filter *utilities.DoubleArray) (problem, got string) {
	var namesBuf [maxQueryDepth]string
	names := namesBuf[:0]
	rest := key
	for {
		fd, after, more := restFieldsOf(m.Descriptor()).longestName(rest)
		if fd == nil || len(names) == maxQueryDepth {
			return unknownQueryParameter, ""
		}
		names = append(names, string(fd.Name()))
		if !more {
			if fd.Message() != nil || filter != nil && filter.HasCommonPrefix(names) {
				return unknownQueryParameter, ""
			}
			return setScalar(m, fd, vals)
		}
		if fd.Message() == nil || fd.IsList() || fd.IsMap() || restrules.Leaf(fd.Message()) {
			return unknownQueryParameter, ""
		}
		m = m.Mutable(fd).Message()
		rest = after
	}
}

// setScalar sets or, for a repeated field, appends vals.
func setScalar(m protoreflect.Message, fd protoreflect.FieldDescriptor, vals []string) (problem, got string) {
	if !fd.IsList() {
		if len(vals) > 1 {
			return "given more than once", ""
		}
		v, problem := parseScalar(fd, vals[0])
		if problem != "" {
			return problem, quoteValue(fd, vals[0])
		}
		m.Set(fd, v)
		return "", ""
	}
	list := m.Mutable(fd).List()
	for _, s := range vals {
		v, problem := parseScalar(fd, s)
		if problem != "" {
			return problem, quoteValue(fd, s)
		}
		list.Append(v)
	}
	return "", ""
}

// quoteValue is how a refused value is quoted: bounded, and without the
// bytes of a string that is not UTF-8, which are the problem.
func quoteValue(fd protoreflect.FieldDescriptor, s string) string {
	if fd.Kind() == protoreflect.StringKind && !utf8.ValidString(s) {
		return ""
	}
	return strconv.Quote(httperr.Echo(s))
}

// parseScalar reads s as a value of fd's scalar kind. On failure it returns
// a description of what was expected.
func parseScalar(fd protoreflect.FieldDescriptor, s string) (protoreflect.Value, string) {
	switch kind := fd.Kind(); kind {
	case protoreflect.StringKind:
		if !utf8.ValidString(s) {
			return protoreflect.Value{}, "not valid UTF-8"
		}
		return protoreflect.ValueOfString(s), ""
	case protoreflect.BoolKind:
		switch s {
		case "true":
			return protoreflect.ValueOfBool(true), ""
		case "false":
			return protoreflect.ValueOfBool(false), ""
		}
		return protoreflect.Value{}, "expected true or false"
	case protoreflect.Int32Kind, protoreflect.Sint32Kind, protoreflect.Sfixed32Kind,
		protoreflect.Int64Kind, protoreflect.Sint64Kind, protoreflect.Sfixed64Kind,
		protoreflect.Uint32Kind, protoreflect.Fixed32Kind, protoreflect.Uint64Kind, protoreflect.Fixed64Kind:
		return parseInteger(kind, s)
	case protoreflect.FloatKind, protoreflect.DoubleKind:
		return parseFloat(kind, s)
	case protoreflect.EnumKind:
		if v := fd.Enum().Values().ByName(protoreflect.Name(s)); v != nil {
			return protoreflect.ValueOfEnum(v.Number()), ""
		}
		return protoreflect.Value{}, fmt.Sprintf("expected a value of %s", fd.Enum().Name())
	case protoreflect.BytesKind:
		b, err := base64.StdEncoding.DecodeString(s)
		if err != nil {
			return protoreflect.Value{}, "expected base64"
		}
		return protoreflect.ValueOfBytes(b), ""
	}
	return protoreflect.Value{}, unknownQueryParameter
}

// parseInteger reads s as a decimal integer of kind, one of the integer
// kinds.
func parseInteger(kind protoreflect.Kind, s string) (protoreflect.Value, string) {
	switch kind {
	case protoreflect.Int32Kind, protoreflect.Sint32Kind, protoreflect.Sfixed32Kind:
		n, err := strconv.ParseInt(s, 10, 32)
		if err != nil {
			return protoreflect.Value{}, integerExpected(err)
		}
		return protoreflect.ValueOfInt32(int32(n)), ""
	case protoreflect.Int64Kind, protoreflect.Sint64Kind, protoreflect.Sfixed64Kind:
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			return protoreflect.Value{}, integerExpected(err)
		}
		return protoreflect.ValueOfInt64(n), ""
	case protoreflect.Uint32Kind, protoreflect.Fixed32Kind:
		n, err := strconv.ParseUint(s, 10, 32)
		if err != nil {
			return protoreflect.Value{}, integerExpected(err)
		}
		return protoreflect.ValueOfUint32(uint32(n)), ""
	}
	n, err := strconv.ParseUint(s, 10, 64)
	if err != nil {
		return protoreflect.Value{}, integerExpected(err)
	}
	return protoreflect.ValueOfUint64(n), ""
}

// parseFloat reads s as a finite number of kind, float or double.
func parseFloat(kind protoreflect.Kind, s string) (protoreflect.Value, string) {
	bits := 64
	if kind == protoreflect.FloatKind {
		bits = 32
	}
	f, err := strconv.ParseFloat(s, bits)
	if err != nil || math.IsInf(f, 0) || math.IsNaN(f) {
		return protoreflect.Value{}, "expected a number"
	}
	if bits == 32 {
		return protoreflect.ValueOfFloat32(float32(f)), ""
	}
	return protoreflect.ValueOfFloat64(f), ""
}

// integerExpected describes an integer that failed to parse.
func integerExpected(err error) string {
	if errors.Is(err, strconv.ErrRange) {
		return "out of range"
	}
	return "expected an integer"
}
