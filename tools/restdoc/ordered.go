package restdoc

import (
	"bytes"
	"encoding/json"
	"slices"
)

// object is a JSON object that keeps its keys in insertion order, so the
// document reads in the order of the protos and the HTTP rules.
type object struct {
	keys   []string
	values map[string]any
}

func newObject() *object { return &object{values: map[string]any{}} }

// set adds or replaces key.
func (o *object) set(key string, value any) {
	if _, ok := o.values[key]; !ok {
		o.keys = append(o.keys, key)
	}
	o.values[key] = value
}

func (o *object) get(key string) (any, bool) {
	v, ok := o.values[key]
	return v, ok
}

// order moves the given keys, those present, to the front in that order.
func (o *object) order(first ...string) {
	keys := make([]string, 0, len(o.keys))
	for _, k := range first {
		if _, ok := o.values[k]; ok {
			keys = append(keys, k)
		}
	}
	for _, k := range o.keys {
		if !slices.Contains(first, k) {
			keys = append(keys, k)
		}
	}
	o.keys = keys
}

// del removes key and returns its value.
func (o *object) del(key string) (any, bool) {
	v, ok := o.values[key]
	if !ok {
		return nil, false
	}
	delete(o.values, key)
	for i, k := range o.keys {
		if k == key {
			o.keys = append(o.keys[:i], o.keys[i+1:]...)
			break
		}
	}
	return v, true
}

// MarshalJSON writes the keys in order.
func (o *object) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, k := range o.keys {
		if i > 0 {
			b.WriteByte(',')
		}
		key, err := json.Marshal(k)
		if err != nil {
			return nil, err
		}
		b.Write(key)
		b.WriteByte(':')
		value, err := json.Marshal(o.values[k])
		if err != nil {
			return nil, err
		}
		b.Write(value)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

// UnmarshalJSON reads an object keeping its key order; nested objects
// become *object too, so generated parts can be added anywhere in it.
func (o *object) UnmarshalJSON(data []byte) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	v, err := decodeOrdered(dec)
	if err != nil {
		return err
	}
	obj, ok := v.(*object)
	if !ok {
		return &json.UnmarshalTypeError{Value: "non-object", Type: nil}
	}
	*o = *obj
	return nil
}

func decodeOrdered(dec *json.Decoder) (any, error) {
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	switch tok {
	case json.Delim('{'):
		o := newObject()
		for dec.More() {
			kt, err := dec.Token()
			if err != nil {
				return nil, err
			}
			v, err := decodeOrdered(dec)
			if err != nil {
				return nil, err
			}
			o.set(kt.(string), v)
		}
		_, err := dec.Token() // '}'
		return o, err
	case json.Delim('['):
		arr := []any{}
		for dec.More() {
			v, err := decodeOrdered(dec)
			if err != nil {
				return nil, err
			}
			arr = append(arr, v)
		}
		_, err := dec.Token() // ']'
		return arr, err
	}
	return tok, nil
}
