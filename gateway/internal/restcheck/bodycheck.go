package restcheck

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/liveproctor/workspaces/pkg/restrules"
)

// checkBody reads the JSON body data against the request message md before
// protojson decodes it, and returns the fields of the body's top-level keys
// in order.
// protojson accepts proto names as well as JSON names and knows nothing of
// hidden fields; this admits only what the API documents: every key, at
// every depth, is a published field's JSON name, given once, with a value
// of the field's JSON type. A field bound to a path parameter (bound, by
// proto field path) may repeat the path's value, not another. Well-known
// types are leaves, checked only as far as a wrapper's bare value.
//
// It scans the bytes itself rather than through encoding/json's tokens,
// which cost an allocation each, since every body on the gateway's hot
// path goes through here. What it skips (a well-known type's insides) it
// reads loosely, as protojson reads the whole body strictly afterwards.
//
// Why not a general validator over the served document instead. For a
// login this takes 0.7 to 0.8 µs; kin-openapi's openapi3filter, which holds
// a whole request (route, query, headers, body) to the document, 12 to 21
// µs; santhosh-tekuri/jsonschema a body alone, its schema compiled once,
// 3.5 to 4.2 µs, but no query or header (go test -bench here and in
// deploy/local/docvalidation, 2026-11-25 23:42 UTC, 2 cores, load 0.4 to
// 1.0). With kin-openapi in front of the mux, make bench's login (-only
// login, A B A B, 23:52 to 23:57 UTC, load 0.6 to 4.7) measured the
// gateway at 149 and 137 µs of CPU per login against 131 and 133 without:
// +8%, and +13% against benchproxy's 90, 79 / 85, 92 µs in the same runs;
// at or over the 10% a replacement may cost. And it would replace little:
// neither validator sees what this checks beyond the schemas (a key given
// twice, text that is not UTF-8, which encoding/json replaces silently, a
// body field bound to the path), nor refuses an unknown query parameter.
// What keeps this and the document from drifting apart are the black-box
// suites that hold every exchange to the served document from both sides
// (deploy/local/e2e: openapi_test.go, null_rest_test.go, fuzz_rest_test.go).
func checkBody(data []byte, md protoreflect.MessageDescriptor, bound map[string]string) ([]protoreflect.FieldDescriptor, *decodeError) {
	c := bodyChecker{data: data, bound: bound, path: make([]pathStep, 0, 4)}
	if c.next() != '{' {
		return nil, &decodeError{message: "invalid request body: not a JSON object"}
	}
	c.pos++
	if de := c.object(md); de != nil {
		return nil, de
	}
	if c.next(); c.pos < len(c.data) {
		return nil, &decodeError{message: "invalid request body: more data after the JSON object"}
	}
	return c.top, nil
}

// maxBodyDepth bounds how deep a body may nest objects and arrays that
// checkBody reads member by member.
const maxBodyDepth = 100

// bodyChecker walks one body.
type bodyChecker struct {
	data  []byte
	pos   int
	bound map[string]string
	// top are the fields of the top-level keys.
	top []protoreflect.FieldDescriptor
	// path leads from the top to the value being read; its text
	// (products[1].bank.id) is only built for an error.
	path []pathStep
}

// pathStep is one step down into the body: an object's member, a list's
// element or a map's entry.
type pathStep struct {
	kind stepKind
	// key is a member's or entry's key, unescaped.
	key []byte
	// field is a member's field, once known.
	field protoreflect.FieldDescriptor
	// index is an element's index.
	index int
}

type stepKind uint8

const (
	member stepKind = iota
	element
	entry
)

// object checks the members of an object whose '{' has been read, up to and
// including its '}'.
func (c *bodyChecker) object(md protoreflect.MessageDescriptor) *decodeError {
	if len(c.path) > maxBodyDepth {
		return c.syntaxError("nested too deeply")
	}
	if c.next() == '}' {
		c.pos++
		return nil
	}
	fields := restFieldsOf(md)
	var seenBuf [16]protoreflect.FieldNumber
	seen := seenBuf[:0]
	for {
		key, de := c.key()
		if de != nil {
			return de
		}
		c.path = append(c.path, pathStep{kind: member, key: key})
		fd := fields.byJSONName[string(key)]
		if fd == nil {
			return c.fieldError("unknown field", "")
		}
		c.path[len(c.path)-1].field = fd
		if slices.Contains(seen, fd.Number()) {
			return c.fieldError("given more than once", "")
		}
		seen = append(seen, fd.Number())
		if len(c.path) == 1 {
			c.top = append(c.top, fd)
		}
		if de := c.value(fd); de != nil {
			return de
		}
		c.path = c.path[:len(c.path)-1]
		if done, de := c.more('}'); done || de != nil {
			return de
		}
	}
}

// value checks the value of field fd.
func (c *bodyChecker) value(fd protoreflect.FieldDescriptor) *decodeError {
	switch first := c.next(); {
	case first == 'n':
		return c.null(restrules.Nullable(fd))
	case fd.IsList():
		if first != '[' {
			return c.mismatch("an array")
		}
		c.pos++
		if c.next() == ']' {
			c.pos++
			return nil
		}
		for i := 0; ; i++ {
			c.path = append(c.path, pathStep{kind: element, index: i})
			if de := c.single(fd); de != nil {
				return de
			}
			c.path = c.path[:len(c.path)-1]
			if done, de := c.more(']'); done || de != nil {
				return de
			}
		}
	case fd.IsMap():
		if first != '{' {
			return c.mismatch("an object")
		}
		c.pos++
		if c.next() == '}' {
			c.pos++
			return nil
		}
		for {
			key, de := c.key()
			if de != nil {
				return de
			}
			c.path = append(c.path, pathStep{kind: entry, key: key})
			if de := c.single(fd.MapValue()); de != nil {
				return de
			}
			c.path = c.path[:len(c.path)-1]
			if done, de := c.more('}'); done || de != nil {
				return de
			}
		}
	}
	return c.check(fd)
}

// single checks one element of a list or one value of a map.
func (c *bodyChecker) single(fd protoreflect.FieldDescriptor) *decodeError {
	if c.next() == 'n' {
		return c.null(false)
	}
	return c.check(fd)
}

// duration checks a Duration against the form the document states, so that
// a value protojson would refuse without naming it is refused here, named.
func (c *bodyChecker) duration() *decodeError {
	if c.next() != '"' {
		return c.mismatch("a string")
	}
	start := c.pos
	s, de := c.str()
	if de != nil {
		return de
	}
	if !restrules.ValidDuration(string(s)) {
		return c.fieldError(`must be seconds with an s suffix, such as "86400s"`, string(c.data[start:c.pos]))
	}
	return nil
}

// null reads a null where a value starts: taken (the field is cleared) when
// the document marks the value nullable, and refused, naming the field,
// everywhere else. Taking null as "empty" would let a client that writes
// null for what it does not set (many serialisers do) wipe what it meant
// to keep.
func (c *bodyChecker) null(nullable bool) *decodeError {
	if de := c.literal("null"); de != nil || nullable {
		return de
	}
	return c.fieldError("must not be null (leave the field out instead)", "")
}

// check checks a value of fd's kind.
func (c *bodyChecker) check(fd protoreflect.FieldDescriptor) *decodeError {
	first := c.next()
	if md := fd.Message(); md != nil {
		if restrules.Leaf(md) {
			if v := md.Fields().ByName("value"); md.Fields().Len() == 1 && v != nil && !v.IsList() {
				return c.check(v) // a wrapper is its bare value
			}
			if md.FullName() == "google.protobuf.Duration" {
				return c.duration()
			}
			start := c.pos
			if de := c.skip(); de != nil {
				return de
			}
			if !utf8.Valid(c.data[start:c.pos]) {
				return c.fieldError("not valid UTF-8", "")
			}
			return nil
		}
		if first != '{' {
			return c.mismatch("an object")
		}
		c.pos++
		return c.object(md)
	}
	isNumber := first == '-' || '0' <= first && first <= '9'
	var ok bool
	var expected string
	switch fd.Kind() {
	case protoreflect.StringKind:
		ok, expected = first == '"', "a string"
	case protoreflect.BytesKind:
		ok, expected = first == '"', "a base64 string"
	case protoreflect.BoolKind:
		ok, expected = first == 't' || first == 'f', "true or false"
	case protoreflect.EnumKind:
		ok, expected = first == '"' || isNumber, "a string"
	default: // numbers, which protojson also takes quoted
		ok, expected = first == '"' || isNumber, "a number"
	}
	if !ok {
		return c.mismatch(expected)
	}
	start := c.pos
	if de := c.skip(); de != nil {
		return de
	}
	if !utf8.Valid(c.data[start:c.pos]) {
		return c.fieldError("not valid UTF-8", "")
	}
	if want, isBound := c.boundValue(); isBound && !sameScalar(fd, scalarText(c.data[start:c.pos]), want) {
		de := c.fieldError("the identifier cannot be modified", "")
		de.message = "invalid request body: " + c.pathText() + " differs from the path; the identifier cannot be modified"
		return de
	}
	return nil
}

// scalarText is the value of a JSON string, number or literal.
func scalarText(raw []byte) string {
	var s string
	if len(raw) > 0 && raw[0] == '"' && json.Unmarshal(raw, &s) == nil {
		return s
	}
	return string(raw)
}

// boundValue returns the path parameter that the value being read is bound
// to, if any.
func (c *bodyChecker) boundValue() (string, bool) {
	for key, v := range c.bound {
		if c.atProtoPath(key) {
			return v, true
		}
	}
	return "", false
}

// atProtoPath reports whether the value being read is the field at the
// proto field path key (address.city), reached through singular fields.
func (c *bodyChecker) atProtoPath(key string) bool {
	for i := len(c.path) - 1; i >= 0; i-- {
		s := c.path[i]
		if s.kind != member || s.field == nil {
			return false
		}
		name := string(s.field.Name())
		if i == 0 {
			return key == name
		}
		cut := len(key) - len(name) - 1
		if cut <= 0 || key[cut] != '.' || key[cut+1:] != name {
			return false
		}
		key = key[:cut]
	}
	return false
}

// sameScalar reports whether the body's value and the path's value of fd
// are the same value, as a path parameter "7" equals a body's 7.
func sameScalar(fd protoreflect.FieldDescriptor, body, path string) bool {
	if fd.Kind() == protoreflect.StringKind {
		return body == path
	}
	b, bad := parseScalar(fd, body)
	if bad != "" {
		return false
	}
	p, bad := parseScalar(fd, path)
	return bad == "" && b.Equal(p)
}

// next skips whitespace and returns the byte there, or 0 at the end.
func (c *bodyChecker) next() byte {
	for ; c.pos < len(c.data); c.pos++ {
		switch b := c.data[c.pos]; b {
		case ' ', '\t', '\n', '\r':
		default:
			return b
		}
	}
	return 0
}

// key reads an object's key and the colon after it.
func (c *bodyChecker) key() ([]byte, *decodeError) {
	if c.next() != '"' {
		return nil, c.unexpected()
	}
	key, de := c.str()
	if de != nil {
		return nil, de
	}
	if c.next() != ':' {
		return nil, c.unexpected()
	}
	c.pos++
	return key, nil
}

// more reads the comma before another member or element, or the closing
// byte, reporting done for the latter.
func (c *bodyChecker) more(closing byte) (done bool, de *decodeError) {
	switch c.next() {
	case ',':
		c.pos++
		return false, nil
	case closing:
		c.pos++
		return true, nil
	}
	return true, c.unexpected()
}

// str reads a string and returns its contents, unescaped.
func (c *bodyChecker) str() ([]byte, *decodeError) {
	start, escaped := c.pos, false
	for i := start + 1; i < len(c.data); i++ {
		switch b := c.data[i]; {
		case b == '"':
			c.pos = i + 1
			if !escaped {
				return c.data[start+1 : i], nil
			}
			var s string
			if err := json.Unmarshal(c.data[start:c.pos], &s); err != nil {
				return nil, c.syntaxError("invalid escape in a string")
			}
			return []byte(s), nil
		case b == '\\':
			escaped = true
			i++ // the escaped byte; a \u escape's digits are plain bytes
		case b < 0x20:
			c.pos = i
			return nil, c.unexpected()
		}
	}
	c.pos = len(c.data)
	return nil, c.unexpected()
}

// literal reads word (true, false or null).
func (c *bodyChecker) literal(word string) *decodeError {
	if !bytes.HasPrefix(c.data[c.pos:], []byte(word)) {
		return c.unexpected()
	}
	c.pos += len(word)
	return nil
}

// skip reads one value of any kind. Inside objects and arrays it only
// follows the nesting and the strings.
func (c *bodyChecker) skip() *decodeError {
	switch first := c.next(); {
	case first == '"':
		_, de := c.str()
		return de
	case first == 't':
		return c.literal("true")
	case first == 'f':
		return c.literal("false")
	case first == 'n':
		return c.literal("null")
	case first == '-' || '0' <= first && first <= '9':
		return c.number()
	case first == '{' || first == '[':
		depth := 0
		for c.pos < len(c.data) {
			switch c.data[c.pos] {
			case '"':
				if _, de := c.str(); de != nil {
					return de
				}
				continue
			case '{', '[':
				depth++
			case '}', ']':
				depth--
			}
			c.pos++
			if depth == 0 {
				return nil
			}
		}
	}
	return c.unexpected()
}

// number reads a number as JSON writes it (RFC 8259). protojson, which
// decodes the body afterwards, also takes an exponent without digits (1e).
func (c *bodyChecker) number() *decodeError {
	if c.data[c.pos] == '-' {
		c.pos++
	}
	if c.pos < len(c.data) && c.data[c.pos] == '0' {
		c.pos++
	} else if !c.digits() {
		return c.unexpected()
	}
	if c.pos < len(c.data) && c.data[c.pos] == '.' {
		c.pos++
		if !c.digits() {
			return c.unexpected()
		}
	}
	if c.pos < len(c.data) && (c.data[c.pos] == 'e' || c.data[c.pos] == 'E') {
		c.pos++
		if c.pos < len(c.data) && (c.data[c.pos] == '+' || c.data[c.pos] == '-') {
			c.pos++
		}
		if !c.digits() {
			return c.unexpected()
		}
	}
	return nil
}

// digits reads a run of decimal digits, reporting whether there was one.
func (c *bodyChecker) digits() bool {
	start := c.pos
	for c.pos < len(c.data) && '0' <= c.data[c.pos] && c.data[c.pos] <= '9' {
		c.pos++
	}
	return c.pos > start
}

// pathText is the JSON path of the value being read: products[1].bank.id.
func (c *bodyChecker) pathText() string {
	var b strings.Builder
	for i, s := range c.path {
		switch s.kind {
		case element:
			b.WriteString("[" + strconv.Itoa(s.index) + "]")
		case entry:
			b.WriteString("[" + strconv.Quote(string(s.key)) + "]")
		default:
			if i > 0 {
				b.WriteByte('.')
			}
			b.Write(s.key)
		}
	}
	return b.String()
}

// fieldError is a decodeError naming the value being read: problem is the
// gateway's text, got the caller's value or "".
func (c *bodyChecker) fieldError(problem, got string) *decodeError {
	return fieldDecodeError("invalid request body", c.pathText(), c.published(), problem, got)
}

// published reports whether the path to the value being read is made of
// published fields' names and indexes only, none of them the caller's text.
func (c *bodyChecker) published() bool {
	for _, s := range c.path {
		if s.kind == entry || s.kind == member && s.field == nil {
			return false
		}
	}
	return true
}

// mismatch is a decodeError for a value of the wrong JSON type.
func (c *bodyChecker) mismatch(expected string) *decodeError {
	var got string
	switch c.next() {
	case '{':
		got = "an object"
	case '[':
		got = "an array"
	default:
		start := c.pos
		if de := c.skip(); de != nil {
			return de
		}
		got = string(c.data[start:c.pos])
	}
	return c.fieldError("expected "+expected, got)
}

// unexpected is a decodeError for the byte at the current position, which
// cannot be there.
func (c *bodyChecker) unexpected() *decodeError {
	if c.pos >= len(c.data) {
		return c.syntaxError("unexpected end of JSON input")
	}
	r, _ := utf8.DecodeRune(c.data[c.pos:])
	return c.syntaxError(fmt.Sprintf("unexpected %q at offset %d", r, c.pos))
}

// syntaxError is a decodeError for a body that is not well-formed JSON.
func (c *bodyChecker) syntaxError(problem string) *decodeError {
	return &decodeError{message: "invalid request body: " + problem}
}
