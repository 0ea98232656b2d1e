package restdoc

import (
	"encoding/json"
	"fmt"
	"strings"

	"google.golang.org/protobuf/compiler/protogen"
	"google.golang.org/protobuf/reflect/protoreflect"

	restv1 "github.com/liveproctor/workspaces/pkg/gen/rest/v1"
	"github.com/liveproctor/workspaces/pkg/restrules"
)

// direction tells whether a message is read from a request or written in a
// response. The two differ: a request schema is closed (the gateway refuses
// unknown fields) and requires only the fields marked required; a response
// schema is open (fields may be added) and requires every field the gateway
// always writes, which is every field but proto3 optional ones (it renders
// unpopulated fields too, so a missing parent reads as null).
type direction int

const (
	request direction = iota
	response
)

// schemas builds components.schemas, one per message and direction.
type schemas struct {
	components *object
	messages   map[protoreflect.FullName]*protogen.Message
	// used records which directions each message is used in, so that a
	// message read in one and written in the other gets two names.
	used  map[protoreflect.FullName]map[direction]bool
	names map[string]protoreflect.FullName
}

func newSchemas(files []*protogen.File) *schemas {
	s := &schemas{
		components: newObject(),
		messages:   map[protoreflect.FullName]*protogen.Message{},
		used:       map[protoreflect.FullName]map[direction]bool{},
		names:      map[string]protoreflect.FullName{},
	}
	var add func([]*protogen.Message)
	add = func(ms []*protogen.Message) {
		for _, m := range ms {
			s.messages[m.Desc.FullName()] = m
			add(m.Messages)
		}
	}
	for _, f := range files {
		add(f.Messages)
	}
	return s
}

// fieldRules returns a field's rest.v1.field option (empty when none).
func fieldRules(f *protogen.Field) *restv1.FieldRules { return restrules.Field(f.Desc) }

// wellKnown reports whether m is a well-known type, written as one value.
func wellKnown(m *protogen.Message) bool { return restrules.Leaf(m.Desc) }

// use records that m, and every message below it, is used in dir.
func (s *schemas) use(m *protogen.Message, dir direction) {
	name := m.Desc.FullName()
	if s.used[name][dir] {
		return
	}
	if s.used[name] == nil {
		s.used[name] = map[direction]bool{}
	}
	s.used[name][dir] = true
	for _, f := range m.Fields {
		if f.Message != nil && restrules.Published(f.Desc) && !wellKnown(f.Message) {
			s.use(f.Message, dir)
		}
	}
}

// name is the component name of m in dir: the message's name, with "Input"
// added for the request form of a message that responses use too.
func (s *schemas) name(m *protogen.Message, dir direction) string {
	n := string(m.Desc.Name())
	if dir == request && s.used[m.Desc.FullName()][response] {
		n += "Input"
	}
	return n
}

// ref returns a reference to m's schema in dir, building it on first use.
func (s *schemas) ref(m *protogen.Message, dir direction) (*object, error) {
	name := s.name(m, dir)
	if owner, ok := s.names[name]; ok && owner != m.Desc.FullName() {
		return nil, fmt.Errorf("schema %s: both %s and %s would have that name", name, owner, m.Desc.FullName())
	}
	ref := newObject()
	ref.set("$ref", "#/components/schemas/"+name)
	if _, ok := s.components.get(name); ok {
		return ref, nil
	}
	s.names[name] = m.Desc.FullName()
	s.components.set(name, nil) // reserve the name and the order; recursion stops here
	schema, err := s.message(m, dir)
	if err != nil {
		return nil, err
	}
	s.components.set(name, schema)
	return ref, nil
}

// message is the object schema of m in dir.
func (s *schemas) message(m *protogen.Message, dir direction) (*object, error) {
	o := newObject()
	o.set("type", "object")
	if d := describe(m.Comments.Leading); d != "" {
		o.set("description", d)
	}
	props := newObject()
	var required []string
	for _, f := range m.Fields {
		rules := fieldRules(f)
		if rules.GetHidden() {
			continue
		}
		if f.Oneof != nil && !f.Oneof.Desc.IsSynthetic() {
			return nil, fmt.Errorf("%s: oneofs are not supported", f.Desc.FullName())
		}
		schema, err := s.field(f, rules, dir)
		if err != nil {
			return nil, err
		}
		props.set(f.Desc.JSONName(), schema)
		if dir == request && rules.GetRequired() || dir == response && !f.Desc.HasOptionalKeyword() {
			required = append(required, f.Desc.JSONName())
		}
	}
	if len(required) > 0 {
		o.set("required", required)
	}
	o.set("properties", props)
	if dir == request {
		o.set("additionalProperties", false)
	}
	return o, nil
}

// field is the schema of one field: an array of values for a repeated
// field, else one value.
func (s *schemas) field(f *protogen.Field, rules *restv1.FieldRules, dir direction) (*object, error) {
	if f.Desc.IsMap() {
		return nil, fmt.Errorf("%s: maps are not supported", f.Desc.FullName())
	}
	value, err := s.value(f, rules, dir)
	if err != nil {
		return nil, err
	}
	description := describe(f.Comments.Leading)
	if rules.GetNullable() {
		if f.Desc.IsList() || f.Message == nil || !isRef(value) || dir != request {
			return nil, fmt.Errorf("%s: nullable applies to message fields of requests only", f.Desc.FullName())
		}
		// In OpenAPI 3.0, nullable takes effect only beside a type, and a
		// $ref takes no siblings: the message's schema is written inline.
		inline, err := s.message(f.Message, dir)
		if err != nil {
			return nil, err
		}
		inline.set("nullable", true)
		if description != "" {
			inline.set("description", description)
		}
		inline.order("type", "nullable", "description")
		return inline, nil
	}
	if !f.Desc.IsList() {
		if description != "" && !isRef(value) {
			value.set("description", description)
		}
		return value, nil
	}
	arr := newObject()
	arr.set("type", "array")
	if description != "" {
		arr.set("description", description)
	}
	arr.set("items", value)
	if n := rules.GetMaxItems(); n > 0 {
		arr.set("maxItems", n)
	}
	if rules.GetUniqueItems() {
		arr.set("uniqueItems", true)
	}
	return arr, nil
}

// value is the schema of one value of f, with the field's rules applied.
func (s *schemas) value(f *protogen.Field, rules *restv1.FieldRules, dir direction) (*object, error) {
	o := newObject()
	switch f.Desc.Kind() {
	case protoreflect.StringKind:
		o.set("type", "string")
	case protoreflect.BoolKind:
		o.set("type", "boolean")
	case protoreflect.Int32Kind, protoreflect.Sint32Kind, protoreflect.Sfixed32Kind:
		o.set("type", "integer")
		o.set("format", "int32")
	case protoreflect.DoubleKind:
		// protojson writes a double as a JSON number (NaN and the
		// infinities as strings, which no REST field takes).
		o.set("type", "number")
		o.set("format", "double")
	case protoreflect.EnumKind:
		o.set("type", "string")
		var names []string
		for _, v := range f.Enum.Values {
			names = append(names, string(v.Desc.Name()))
		}
		o.set("enum", names)
	case protoreflect.MessageKind:
		switch f.Message.Desc.FullName() {
		case "google.protobuf.StringValue":
			o.set("type", "string")
			// The gateway takes null for it by the same rule.
			o.set("nullable", restrules.Nullable(f.Desc))
		case "google.protobuf.Duration":
			// protojson writes a Duration as seconds with an "s" suffix.
			o.set("type", "string")
			o.set("pattern", restrules.DurationPattern)
			o.set("example", json.RawMessage(`"86400s"`))
		default:
			if wellKnown(f.Message) {
				return nil, fmt.Errorf("%s: %s is not supported", f.Desc.FullName(), f.Message.Desc.FullName())
			}
			if hasItemRules(rules) {
				return nil, fmt.Errorf("%s: value rules apply to scalars only", f.Desc.FullName())
			}
			return s.ref(f.Message, dir)
		}
	default:
		// 64-bit integers are strings in protojson, bytes are base64, floats
		// are doubles:
		// nothing here uses them, so the document need not describe them.
		return nil, fmt.Errorf("%s: %s fields are not supported", f.Desc.FullName(), f.Desc.Kind())
	}
	if v := rules.GetFormat(); v != "" {
		o.set("format", v)
	}
	if v := rules.GetPattern(); v != "" {
		o.set("pattern", v)
	}
	if v := rules.GetMinLength(); v > 0 {
		o.set("minLength", v)
	}
	if v := rules.GetMaxLength(); v > 0 {
		o.set("maxLength", v)
	}
	if rules.Minimum != nil {
		o.set("minimum", rules.GetMinimum())
	}
	if rules.Maximum != nil {
		o.set("maximum", rules.GetMaximum())
	}
	if v := rules.GetEnum(); len(v) > 0 {
		o.set("enum", v)
	}
	if v := rules.GetExample(); v != "" {
		if !json.Valid([]byte(v)) {
			return nil, fmt.Errorf("%s: example is not JSON: %s", f.Desc.FullName(), v)
		}
		o.set("example", json.RawMessage(v))
	}
	return o, nil
}

// hasItemRules reports whether rules constrain a single value.
func hasItemRules(r *restv1.FieldRules) bool {
	return r.GetFormat() != "" || r.GetPattern() != "" || r.GetMinLength() > 0 || r.GetMaxLength() > 0 ||
		r.Minimum != nil || r.Maximum != nil || len(r.GetEnum()) > 0 || r.GetExample() != ""
}

func isRef(o *object) bool {
	_, ok := o.get("$ref")
	return ok
}

// describe turns a proto comment into a description: lines of a paragraph
// are joined, paragraphs kept.
func describe(c protogen.Comments) string {
	var paragraphs []string
	var current []string
	for _, line := range strings.Split(strings.TrimSpace(string(c)), "\n") {
		line = strings.TrimSpace(line)
		if line == "" {
			if len(current) > 0 {
				paragraphs = append(paragraphs, strings.Join(current, " "))
				current = nil
			}
			continue
		}
		current = append(current, line)
	}
	if len(current) > 0 {
		paragraphs = append(paragraphs, strings.Join(current, " "))
	}
	return strings.Join(paragraphs, "\n\n")
}
