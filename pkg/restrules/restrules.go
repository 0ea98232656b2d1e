// Package restrules reads the rest.v1 options (proto/rest/v1/rest.proto):
// what the REST interface publishes of the gRPC API. The gateway enforces
// it and the OpenAPI generator (tools/restdoc) declares it through these
// same functions, so the two cannot read the options differently.
package restrules

import (
	"regexp"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"

	restv1 "github.com/liveproctor/workspaces/pkg/gen/rest/v1"
)

// Field returns fd's rules; never nil.
func Field(fd protoreflect.FieldDescriptor) *restv1.FieldRules {
	if r, _ := proto.GetExtension(fd.Options(), restv1.E_Field).(*restv1.FieldRules); r != nil {
		return r
	}
	return &restv1.FieldRules{}
}

// Published reports whether fd is part of the REST interface: a field
// marked hidden is gRPC only, neither documented nor accepted over REST.
func Published(fd protoreflect.FieldDescriptor) bool { return !Field(fd).GetHidden() }

// Nullable reports whether a request may send JSON null for fd, which then
// clears it: a message field marked (rest.v1.field).nullable (an update's
// rateLimit), or a single string wrapper (parentWorkspaceId), whose null is
// how JSON says "no value". Any other field, and any element of a list,
// refuses null: a client that means to leave a field as it is leaves it
// out.
func Nullable(fd protoreflect.FieldDescriptor) bool {
	if fd.IsList() || fd.IsMap() || fd.Message() == nil {
		return false
	}
	return Field(fd).GetNullable() || fd.Message().FullName() == "google.protobuf.StringValue"
}

// Leaf reports whether md is one of protobuf's well-known types, which JSON
// writes in forms of their own (a wrapper as its bare value, a field mask as
// one string): REST bodies and the document treat them as single values.
func Leaf(md protoreflect.MessageDescriptor) bool {
	return md.ParentFile().Package() == "google.protobuf"
}

// Operation returns md's operation options, or nil when it has none.
func Operation(md protoreflect.MethodDescriptor) *restv1.Operation {
	op, _ := proto.GetExtension(md.Options(), restv1.E_Operation).(*restv1.Operation)
	return op
}

// SuccessStatus is the HTTP status of md's successful REST answer: its
// operation's success_status, 200 when that is unset.
func SuccessStatus(md protoreflect.MethodDescriptor) int {
	if status := Operation(md).GetSuccessStatus(); status != 0 {
		return int(status)
	}
	return 200
}

// DurationPattern is the form a google.protobuf.Duration takes in a request:
// seconds with an s suffix ("86400s", "1.5s"), without leading zeros or an
// exponent, and at most 11 digits of seconds, so that every value it
// admits is one protobuf can hold (up to about 10,000 years). The document
// states it and the gateway holds requests to it.
const DurationPattern = `^-?(0|[1-9][0-9]{0,10})(\.[0-9]{1,9})?s$`

// ValidDuration reports whether s has the form DurationPattern describes.
var ValidDuration = regexp.MustCompile(DurationPattern).MatchString
