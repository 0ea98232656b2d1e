package restcheck

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"net/url"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/grpc-ecosystem/grpc-gateway/v2/utilities"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/liveproctor/workspaces/gateway/internal/httperr"
	"github.com/liveproctor/workspaces/gateway/internal/reqstate"
	authv1 "github.com/liveproctor/workspaces/pkg/gen/auth/v1"
	workspacev1 "github.com/liveproctor/workspaces/pkg/gen/workspace/v1"
	"github.com/liveproctor/workspaces/pkg/restrules"
)

// bodyRoute is a request message that a route decodes from its body, with
// the path parameters the route binds.
type bodyRoute struct {
	newMessage func() proto.Message
	bound      map[string]string
}

// bodyRoutes are the routes that take a body (proto/http_rules.yaml).
var bodyRoutes = []bodyRoute{
	{func() proto.Message { return &workspacev1.UpdateWorkspaceRequest{} }, map[string]string{"id": "w1"}},
	{func() proto.Message { return &workspacev1.CreateWorkspaceRequest{} }, nil},
	{func() proto.Message { return &workspacev1.ListWorkspacesRequest{} }, nil},
	{func() proto.Message { return &authv1.CreateSdkTokenRequest{} }, nil},
	{func() proto.Message { return &authv1.RevokeUserSdkTokensRequest{} }, nil},
}

// bodySeeds are bodies for the routes in bodyRoutes, accepted and refused.
var bodySeeds = []string{
	`{"id":"springfield-district","name":"Springfield District","type":"DISTRICT","parentWorkspaceId":null,` +
		`"address":{"city":"Springfield","state":"US-IL","country":"US"},"products":[{"bank":{"id":"pub/math"}}]}`,
	`{"name":"Springfield Public Schools","objectiveDocuments":["CCSS#Math#Grade5:2010"],"id":"w1"}`,
	`{"filter":{"search":"spring","address.state":{"include":["US-IL"]}},"pageSize":50,"pageToken":"e30"}`,
	`{"email":"ada@example.com","workspaceId":"springfield-district"}`,
	`{"pageSize":"7"}`, `{"pageSize":1.5}`, `{"pageSize":-1e3}`, `{"pageSize":99999999999}`,
	`{"parentWorkspaceId":{}}`, `{"n\u0061me":"x","name":"y"}`, `{"etag":"x"}`, `{"updateMask":"name"}`,
	`{"id":"w2"}`, `{"id":"\u0077\u0031"}`, `{"name":"\ud800"}`, "{\"name\":\"\xff\"}", "{\"\xff\":1}",
	`{"name":"n"} x`, `{"name":`, `[1]`, `  `, `{}`, `{"products":[null]}`, `{"address":{"city":null}}`,
	`{"a":` + strings.Repeat("[", 200) + `}`, `{"filter":` + strings.Repeat(`{"search":`, 50) + `}`,
}

// A body the strict decoder refuses is a decodeError, kept in the request's
// state for the error handler, whose message says it is about the body;
// one it accepts is one JSON object that protojson decodes to the same
// message, which sets only published fields (the update mask being the
// decoder's), keeps the path's id, and decodes again from its own JSON.
func FuzzDecodeBody(f *testing.F) {
	for _, seed := range bodySeeds {
		for route := range bodyRoutes {
			f.Add(seed, uint8(route))
		}
	}
	m := NewJSONMarshaler()
	f.Fuzz(func(t *testing.T, body string, route uint8) {
		r := bodyRoutes[int(route)%len(bodyRoutes)]
		msg, err, state := decodeAs(m, r, body)
		if len(bytes.TrimSpace([]byte(body))) == 0 {
			if err != io.EOF {
				t.Fatalf("an empty body decoded to %v, want io.EOF (no body)", err)
			}
			return
		}
		if err != nil {
			var de *decodeError
			if !errors.As(err, &de) || state.DecodeErr != de {
				t.Fatalf("%s refused with %v (%T), not a decodeError in the request's state", body, err, err)
			}
			if !strings.HasPrefix(de.message, "invalid request body: ") {
				t.Fatalf("%s refused with the message %q", body, de.message)
			}
			return
		}

		if !json.Valid([]byte(body)) {
			t.Fatalf("accepted %q, which is not JSON", body)
		}
		plain := r.newMessage()
		if err := protojson.Unmarshal([]byte(body), plain); err != nil {
			t.Fatalf("accepted %s, which protojson refuses: %v", body, err)
		}
		if u, ok := msg.(*workspacev1.UpdateWorkspaceRequest); ok {
			if u.GetUpdateMask() == nil {
				t.Fatalf("%s decoded without an update mask", body)
			}
			u.UpdateMask = nil
			if id := u.GetId(); id != "" && id != r.bound["id"] {
				t.Fatalf("%s changed the path's id to %q", body, id)
			}
		}
		if !proto.Equal(msg, plain) {
			t.Fatalf("%s decoded to {%v}, protojson says {%v}", body, msg, plain)
		}
		if field := hiddenFieldSet(msg.ProtoReflect()); field != "" {
			t.Fatalf("%s set the hidden field %s", body, field)
		}
		again, err := protojson.Marshal(msg)
		if err != nil {
			t.Fatalf("%s decoded to {%v}, which does not encode: %v", body, msg, err)
		}
		msg2, err, _ := decodeAs(m, r, string(again))
		if u, ok := msg2.(*workspacev1.UpdateWorkspaceRequest); ok {
			u.UpdateMask = nil
		}
		if err != nil && err != io.EOF || !proto.Equal(msg2, plain) {
			t.Fatalf("%s decoded to {%v}, whose JSON %s decodes to {%v}, %v", body, msg, again, msg2, err)
		}
	})
}

// decodeAs decodes body for route r as the gateway does, through the
// request's capped body and state.
func decodeAs(m *JSONMarshaler, r bodyRoute, body string) (proto.Message, error, *reqstate.State) {
	state := &reqstate.State{PathParams: r.bound}
	in := state.CapBody(io.NopCloser(strings.NewReader(body)))
	msg := r.newMessage()
	err := m.NewDecoder(in).Decode(msg)
	return msg, err, state
}

// hiddenFieldSet returns the first field set in m, at any depth, that the
// REST interface does not publish, or "".
func hiddenFieldSet(m protoreflect.Message) string {
	found := ""
	m.Range(func(fd protoreflect.FieldDescriptor, v protoreflect.Value) bool {
		if !restrules.Published(fd) {
			found = string(fd.FullName())
			return false
		}
		if md := fd.Message(); md != nil && !restrules.Leaf(md) && !fd.IsMap() {
			if fd.IsList() {
				for i := range v.List().Len() {
					if found = hiddenFieldSet(v.List().Get(i).Message()); found != "" {
						return false
					}
				}
			} else if found = hiddenFieldSet(v.Message()); found != "" {
				return false
			}
		}
		return true
	})
	return found
}

// namesKey reports whether field is one of keys as an answer quotes it
// (echo: valid UTF-8, a bounded prefix of a long one).
func namesKey(keys map[string]bool, field string) bool {
	for k := range keys {
		if field == k || field == httperr.Echo(k) {
			return true
		}
	}
	return false
}

// A query string the parser refuses names one of its keys as the refused
// parameter, and leaves it where the error handler finds it; one it accepts
// asks for the same message as the JSON body of the same fields does, so
// the GET and POST lists cannot disagree.
func FuzzQueryParser(f *testing.F) {
	for _, seed := range []string{
		"", "filter.search=spring", "filter.address.state.include=US-CA&filter.address.state.include=US-NY",
		"filter.search=a%20b&filter.address.state.include=US-ZZ&pageSize=7&pageToken=tok", "pageSize=0", "pageToken=",
		"colour=red", "zebra=1&apple=2", "page_size=5", "pageSize=x", "pageSize=1&pageSize=2", "pageSize=99999999999",
		"filter=x", "filter.address.state=US", "filter..search=x", "filter.search.x=1", ".=1", "filter.search=%ff",
		"pageSize=%2B7", "pageSize=-0", "id=w2", "etag=x", "%00query+error=x", strings.Repeat("filter.", 20) + "search=x",
	} {
		f.Add(seed)
	}
	m := NewJSONMarshaler()
	route := bodyRoute{newMessage: func() proto.Message { return &workspacev1.ListWorkspacesRequest{} }}
	f.Fuzz(func(t *testing.T, query string) {
		values, err := url.ParseQuery(query)
		if err != nil {
			return // net/http refuses such a query before the parser sees it
		}
		msg := &workspacev1.ListWorkspacesRequest{}
		keys := make(map[string]bool, len(values))
		for k := range values {
			keys[k] = true
		}
		if err := (QueryParser{}).Parse(msg, values, utilities.NewDoubleArray(nil)); err != nil {
			var de *decodeError
			if !errors.As(err, &de) || !namesKey(keys, de.field) || de.description == "" {
				t.Fatalf("?%s refused with %v, naming none of its keys", query, err)
			}
			if v := values[queryErrorKey]; len(v) != 3 || v[0] != de.field || v[2] != de.message {
				t.Fatalf("?%s refused without leaving the refusal for the error handler: %q", query, v)
			}
			return
		}
		if hasInvalidUTF8(values) {
			// Accepted today and refused later by the proto encoding; the
			// hostile-input work answers it 400 before the parser.
			return
		}
		body, err := protojson.Marshal(msg)
		if err != nil {
			t.Fatalf("?%s gave {%v}, which does not encode: %v", query, msg, err)
		}
		fromBody, err, _ := decodeAs(m, route, string(body))
		if err != nil && err != io.EOF || !proto.Equal(fromBody, msg) {
			t.Fatalf("?%s asks {%v}; its JSON %s asks {%v}, %v", query, msg, body, fromBody, err)
		}
	})
}

// hasInvalidUTF8 reports whether any key or value is not UTF-8.
func hasInvalidUTF8(values url.Values) bool {
	for k, vs := range values {
		if !utf8.ValidString(k) {
			return true
		}
		for _, v := range vs {
			if !utf8.ValidString(v) {
				return true
			}
		}
	}
	return false
}
