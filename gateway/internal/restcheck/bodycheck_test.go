package restcheck

import (
	"slices"
	"strings"
	"testing"

	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/reflect/protoreflect"

	workspacev1 "github.com/liveproctor/workspaces/pkg/gen/workspace/v1"
)

// nullRefused is checkBody's description of a null the document does not
// allow.
const nullRefused = "must not be null (leave the field out instead)"

// durationForm is checkBody's description of a malformed duration.
const durationForm = `must be seconds with an s suffix, such as "86400s"`

func TestCheckBody(t *testing.T) {
	update := (&workspacev1.UpdateWorkspaceRequest{}).ProtoReflect().Descriptor()
	list := (&workspacev1.ListWorkspacesRequest{}).ProtoReflect().Descriptor()
	rotate := (&workspacev1.RotateWorkspaceKeyRequest{}).ProtoReflect().Descriptor()
	bound := map[string]string{"id": "w1"}
	tests := []struct {
		name        string
		md          protoreflect.MessageDescriptor
		body        string
		top         []string // the top-level fields' JSON names, when accepted
		field, desc string   // the refusal's field and description
		refused     bool     // refused without a field (not JSON)
	}{
		{name: "empty object", md: update, body: ` { } `, top: []string{}},
		{name: "white space and the nulls the document allows", md: update,
			body: "{\n\t\"rateLimit\" : null ,\r\n \"address\":{ }, \"products\":[ ],\"parentWorkspaceId\":null}",
			top:  []string{"rateLimit", "address", "products", "parentWorkspaceId"}},
		{name: "escaped key", md: update, body: `{"n\u0061me":"x"}`, top: []string{"name"}},
		{name: "escapes in values", md: update, body: `{"name":"a\"b\\","objectiveDocuments":["\u00e9\n"]}`, top: []string{"name", "objectiveDocuments"}},
		{name: "dotted name", md: list, body: `{"filter":{"address.state":{"include":["US-CA"]}},"pageSize":-1e3}`, top: []string{"filter", "pageSize"}},
		{name: "numbers quoted", md: list, body: `{"pageSize":"7"}`, top: []string{"pageSize"}},
		{name: "same id", md: update, body: `{"id":"w1"}`, top: []string{"id"}},
		{name: "same id escaped", md: update, body: `{"id":"\u0077\u0031"}`, top: []string{"id"}},

		// null is refused wherever the document does not mark it nullable.
		{name: "null id", md: update, body: `{"id":null}`, field: "id", desc: nullRefused},
		{name: "null name", md: update, body: `{"name":null}`, field: "name", desc: nullRefused},
		{name: "null list", md: update, body: `{"products":null}`, field: "products", desc: nullRefused},
		{name: "null object", md: update, body: `{"address":null}`, field: "address", desc: nullRefused},
		{name: "null inside", md: update, body: `{"address":{"city":"x","state":null}}`, field: "address.state", desc: nullRefused},
		{name: "null element", md: update, body: `{"objectiveDocuments":["a#b#c:2020",null]}`, field: "objectiveDocuments[1]", desc: nullRefused},
		{name: "null deep", md: update, body: `{"products":[{"bank":null}]}`, field: "products[0].bank", desc: nullRefused},
		{name: "null number", md: list, body: `{"pageSize":null}`, field: "pageSize", desc: nullRefused},
		{name: "null filter", md: list, body: `{"filter":null}`, field: "filter", desc: nullRefused},
		{name: "null dotted", md: list, body: `{"filter":{"address.state":null}}`, field: "filter.address.state", desc: nullRefused},
		{name: "null include", md: list, body: `{"filter":{"address.state":{"include":null}}}`, field: "filter.address.state.include", desc: nullRefused},

		// A duration in the form the document states, which protojson
		// would refuse without naming the field.
		{name: "duration", md: rotate, body: `{"expireAfter":"86400s"}`, top: []string{"expireAfter"}},
		{name: "duration with a fraction", md: rotate, body: `{"expireAfter":"1.5s"}`, top: []string{"expireAfter"}},
		{name: "duration with a leading zero", md: rotate, body: `{"expireAfter":"0717s"}`, field: "expireAfter", desc: durationForm + `, got "0717s"`},
		{name: "duration out of range", md: rotate, body: `{"expireAfter":"99999999999999s"}`, field: "expireAfter", desc: durationForm + `, got "99999999999999s"`},
		{name: "duration as a number", md: rotate, body: `{"expireAfter":3600}`, field: "expireAfter", desc: "expected a string, got 3600"},

		{name: "other id", md: update, body: `{"name":"n","id":"w2"}`, field: "id", desc: "the identifier cannot be modified"},
		{name: "empty id", md: update, body: `{"id":""}`, field: "id", desc: "the identifier cannot be modified"},
		{name: "twice by escape", md: update, body: `{"name":"a","n\u0061me":"b"}`, field: "name", desc: "given more than once"},
		{name: "hidden", md: update, body: `{"etag":"x"}`, field: "etag", desc: "unknown field"},
		{name: "proto name", md: list, body: `{"page_size":1}`, field: "page_size", desc: "unknown field"},
		{name: "proto name inside", md: list, body: `{"filter":{"address_state":{}}}`, field: "filter.address_state", desc: "unknown field"},
		{name: "deep", md: list, body: `{"filter":{"address.state":{"include":[],"x":1}}}`, field: "filter.address.state.x", desc: "unknown field"},
		{name: "element", md: update, body: `{"products":[{"bank":{"id":"a/b"}},{"bank":{"id":"a/b","name":"x"}}]}`, field: "products[1].bank.name", desc: "unknown field"},
		{name: "element type", md: update, body: `{"products":[1]}`, field: "products[0]", desc: "expected an object, got 1"},
		{name: "bool for string", md: update, body: `{"name":false}`, field: "name", desc: "expected a string, got false"},
		{name: "array for string", md: update, body: `{"name":["x"]}`, field: "name", desc: "expected a string, got an array"},
		{name: "string for number", md: list, body: `{"pageSize":true}`, field: "pageSize", desc: "expected a number, got true"},
		{name: "long value cut", md: update, body: `{"address":"` + strings.Repeat("a", 100) + `"}`,
			field: "address", desc: `expected an object, got "` + strings.Repeat("a", 63) + `…`},
		{name: "long unknown name cut", md: update, body: `{"` + strings.Repeat("é", 100) + `":1}`,
			field: strings.Repeat("é", 64) + "…", desc: "unknown field"},
		{name: "invalid UTF-8 in a value", md: update, body: "{\"name\":\"a\xffb\"}", field: "name", desc: "not valid UTF-8"},
		{name: "invalid UTF-8 in a leaf", md: update, body: "{\"parentWorkspaceId\":\"\xff\"}", field: "parentWorkspaceId", desc: "not valid UTF-8"},
		{name: "invalid UTF-8 in a name", md: update, body: "{\"\xffname\":1}", field: "\uFFFDname", desc: "unknown field"},

		{name: "not an object", md: update, body: `"x"`, refused: true},
		{name: "empty key list", md: update, body: `{,}`, refused: true},
		{name: "trailing comma", md: update, body: `{"name":"n",}`, refused: true},
		{name: "missing colon", md: update, body: `{"name" "n"}`, refused: true},
		{name: "unterminated string", md: update, body: `{"name":"n`, refused: true},
		{name: "control character", md: update, body: "{\"name\":\"a\nb\"}", refused: true},
		{name: "bad literal", md: update, body: `{"name":nul}`, refused: true},
		{name: "bad escape", md: update, body: `{"n\qme":"x"}`, refused: true},
		{name: "unclosed", md: update, body: `{"address":{"city":"x"}`, refused: true},
		{name: "more after", md: update, body: `{} x`, refused: true},
		// protojson takes these numbers; JSON does not.
		{name: "exponent without digits", md: list, body: `{"pageSize":1e}`, refused: true},
		{name: "signed exponent without digits", md: list, body: `{"pageSize":1E+}`, refused: true},
		{name: "fraction without digits", md: list, body: `{"pageSize":1.}`, refused: true},
		{name: "leading zero", md: list, body: `{"pageSize":01}`, refused: true},
		{name: "minus alone", md: list, body: `{"pageSize":-}`, refused: true},
		{name: "wrapper number", md: update, body: `{"parentWorkspaceId":2e}`, refused: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			top, de := checkBody([]byte(tt.body), tt.md, bound)
			switch {
			case tt.top != nil:
				if de != nil {
					t.Fatalf("refused: %v", de)
				}
				names := []string{}
				for _, fd := range top {
					names = append(names, fd.JSONName())
				}
				if !slices.Equal(names, tt.top) {
					t.Errorf("top %q, want %q", names, tt.top)
				}
			case tt.refused:
				if de == nil || de.field != "" {
					t.Errorf("got %+v, want a refusal naming no field", de)
				}
			default:
				if de == nil || de.field != tt.field || de.description != tt.desc {
					t.Errorf("got %+v, want %s: %s", de, tt.field, tt.desc)
				}
			}
		})
	}
}

// Whatever checkBody admits and protojson then decodes sets no hidden field:
// REST cannot reach what the document does not publish.
func FuzzCheckBody(f *testing.F) {
	for _, seed := range []string{
		`{"name":"n","etag":"x"}`, `{"updateMask":"name"}`, `{"update_mask":{"paths":["name"]}}`,
		`{"address":{"city":"x"},"products":[{"bank":{"id":"a/b"}}]}`, `{"e\u0074ag":"x"}`, `{"parentWorkspaceId":"p"}`,
	} {
		f.Add(seed)
	}
	md := (&workspacev1.UpdateWorkspaceRequest{}).ProtoReflect().Descriptor()
	f.Fuzz(func(t *testing.T, body string) {
		if _, de := checkBody([]byte(body), md, nil); de != nil {
			return
		}
		msg := &workspacev1.UpdateWorkspaceRequest{}
		if protojson.Unmarshal([]byte(body), msg) != nil {
			return
		}
		if msg.GetEtag() != "" || msg.GetUpdateMask() != nil {
			t.Errorf("%s set a hidden field: %v", body, msg)
		}
	})
}
