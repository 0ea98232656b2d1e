package server_test

import (
	"net/http"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"
)

// The GET list takes the POST body's fields as query parameters by their
// JSON names, and asks the service exactly what the POST does.
func TestListQueryFiltersLikeBody(t *testing.T) {
	e := newEnv(t, options{})
	tests := []struct{ query, body string }{
		{"", `{}`},
		{"filter.search=spring", `{"filter":{"search":"spring"}}`},
		{"filter.address.state.include=US-CA&filter.address.state.include=US-NY",
			`{"filter":{"address.state":{"include":["US-CA","US-NY"]}}}`},
		{"filter.search=a%20b&filter.address.state.include=US-ZZ&pageSize=7&pageToken=tok",
			`{"filter":{"search":"a b","address.state":{"include":["US-ZZ"]}},"pageSize":7,"pageToken":"tok"}`},
		{"pageSize=0", `{"pageSize":0}`},
		{"pageToken=", `{"pageToken":""}`},
	}
	for _, tt := range tests {
		resp, body := e.do(t, http.MethodGet, "/api/workspaces?"+tt.query, nil, nil)
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("GET ?%s: %d %s", tt.query, resp.StatusCode, body)
		}
		fromQuery := e.workspaces.listed()
		resp, body = e.do(t, http.MethodPost, "/api/workspaces", strings.NewReader(tt.body), nil)
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("POST %s: %d %s", tt.body, resp.StatusCode, body)
		}
		fromBody := e.workspaces.listed()
		if fromQuery == nil || !proto.Equal(fromQuery, fromBody) {
			t.Errorf("GET ?%s asks {%v}, POST %s asks {%v}", tt.query, fromQuery, tt.body, fromBody)
		}
	}

	// pageSize has presence: 0 reaches the service as given, for it to refuse.
	e.do(t, http.MethodGet, "/api/workspaces?pageSize=0", nil, nil)
	if req := e.workspaces.listed(); req == nil || req.PageSize == nil || req.GetPageSize() != 0 {
		t.Errorf("pageSize=0 arrived as %v", req)
	}
	e.do(t, http.MethodGet, "/api/workspaces", nil, nil)
	if req := e.workspaces.listed(); req == nil || req.PageSize != nil || proto.Size(req) != 0 {
		t.Errorf("no query arrived as %v", req)
	}
}

func TestQueryParametersOutsideTheDocumentAreRefused(t *testing.T) {
	e := newEnv(t, options{})
	tests := []struct {
		name, method, path, field, description string
	}{
		{"unknown", "GET", "/api/workspaces?colour=red", "colour", "unknown query parameter"},
		{"the first of two by name", "GET", "/api/workspaces?zebra=1&apple=2", "apple", "unknown query parameter"},
		{"proto name", "GET", "/api/workspaces?page_size=5", "page_size", "unknown query parameter"},
		{"proto name inside", "GET", "/api/workspaces?filter.address_state.include=US-CA", "filter.address_state.include", "unknown query parameter"},
		{"unknown inside", "GET", "/api/workspaces?filter.nope=1", "filter.nope", "unknown query parameter"},
		{"a message", "GET", "/api/workspaces?filter=x", "filter", "unknown query parameter"},
		{"below a scalar", "GET", "/api/workspaces?pageSize.x=1", "pageSize.x", "unknown query parameter"},
		{"not an integer", "GET", "/api/workspaces?pageSize=x", "pageSize", `expected an integer, got "x"`},
		{"empty integer", "GET", "/api/workspaces?pageSize=", "pageSize", `expected an integer, got ""`},
		{"out of range", "GET", "/api/workspaces?pageSize=9999999999", "pageSize", `out of range, got "9999999999"`},
		{"given twice", "GET", "/api/workspaces?pageSize=1&pageSize=2", "pageSize", "given more than once"},
		{"search given twice", "GET", "/api/workspaces?filter.search=a&filter.search=b", "filter.search", "given more than once"},
		{"hidden", "DELETE", "/api/workspace/w1?etag=%221%22", "etag", "unknown query parameter"},
		{"bound to the path", "DELETE", "/api/workspace/w1?id=w2", "id", "unknown query parameter"},
		{"the parser's own key", "GET", "/api/workspaces?%00query%20error=f&%00query%20error=d&%00query%20error=m", "\x00query error", "unknown query parameter"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp, body := e.do(t, tt.method, tt.path, nil, nil)
			p := checkError(t, resp, body, http.StatusBadRequest, "INVALID_ARGUMENT")
			if len(p.Details) != 1 || p.Details[0].Field != tt.field || p.Details[0].Description != tt.description {
				t.Errorf("details %+v", p.Details)
			}
			// The caller's own text is quoted once, in the detail: an
			// unknown parameter's name is not repeated in the message; a
			// published name is.
			if named := strings.Contains(p.Message, ": "+tt.field+": "); named != (tt.description != "unknown query parameter") {
				t.Errorf("message %q names %q: %v", p.Message, tt.field, named)
			}
			if req := e.workspaces.listed(); req != nil {
				t.Errorf("the service was asked %v", req)
			}
		})
	}
}

func TestMalformedQuery(t *testing.T) {
	e := newEnv(t, options{})
	resp, body := e.do(t, http.MethodGet, "/api/workspaces?%00query%20error=f&%00query%20error=d&%00query%20error=m&x=%zz", nil, nil)
	if p := checkError(t, resp, body, http.StatusBadRequest, "INVALID_ARGUMENT"); len(p.Details) != 0 || p.Message == "m" {
		t.Errorf("error %+v", p)
	}
}
