package jose

import (
	"bytes"
	"encoding/json"
	"io"
	"unicode/utf8"
)

// CheckObject returns nil when data is exactly one JSON object, in UTF-8, in
// which no object at any depth names a member twice (names compared after
// unescaping), and an ErrMalformed otherwise.
//
// Verify applies it to the header and ParseClaims to the claims set. A caller
// that decodes a payload by other means should apply it too: encoding/json
// keeps the last of duplicated members where another implementation may keep
// the first, and claims decide who is signed in.
func CheckObject(data []byte) error {
	if !utf8.Valid(data) {
		return malformed("JSON is not UTF-8")
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber() // any number is syntax here, never a float64 overflow
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return malformed("not a JSON object")
	}
	type container struct {
		names   map[string]bool // nil in an array
		wantKey bool            // an object's next token is a member name
	}
	open := []container{{names: map[string]bool{}, wantKey: true}}
	for len(open) > 0 {
		tok, err := dec.Token() // checks the syntax, commas and colons included
		if err != nil {
			return malformed("invalid JSON")
		}
		if tok == json.Delim('}') || tok == json.Delim(']') {
			open = open[:len(open)-1]
			continue
		}
		top := &open[len(open)-1]
		if top.names != nil && top.wantKey {
			name, _ := tok.(string)
			if top.names[name] {
				return malformed("duplicate member name")
			}
			top.names[name] = true
			top.wantKey = false
			continue
		}
		top.wantKey = true // a value starts; in an object, a name follows it
		switch tok {
		case json.Delim('{'):
			open = append(open, container{names: map[string]bool{}, wantKey: true})
		case json.Delim('['):
			open = append(open, container{})
		}
	}
	if _, err := dec.Token(); err != io.EOF {
		return malformed("data after the JSON object")
	}
	return nil
}

// members checks data with CheckObject and returns its members by exact name.
// Looking members up by exact name, rather than decoding into a struct, keeps
// encoding/json's case-insensitive field matching ("ALG" for "alg") out.
func members(data []byte) (map[string]json.RawMessage, error) {
	if err := CheckObject(data); err != nil {
		return nil, err
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(data, &m); err != nil {
		return nil, malformed("invalid JSON")
	}
	return m, nil
}

// stringOf decodes raw when it is a JSON string (null is not).
func stringOf(raw json.RawMessage) (string, bool) {
	var s string
	if len(raw) == 0 || raw[0] != '"' || json.Unmarshal(raw, &s) != nil {
		return "", false
	}
	return s, true
}

// stringMember sets *dst to member name of m when present, which must then
// be a string.
func stringMember(m map[string]json.RawMessage, name string, dst *string) error {
	raw, ok := m[name]
	if !ok {
		return nil
	}
	s, ok := stringOf(raw)
	if !ok {
		return malformed(name + " is not a string")
	}
	*dst = s
	return nil
}
