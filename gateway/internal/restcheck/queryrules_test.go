package restcheck

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/grpc-ecosystem/grpc-gateway/v2/runtime"
	"google.golang.org/protobuf/encoding/protojson"

	restv1 "github.com/liveproctor/workspaces/pkg/gen/rest/v1"
)

// queryRulesDoc is a small OpenAPI 3 document: a list with query
// parameters (one shared by the path item, one by reference), a get and
// an undelete whose path variables are JSON names, unlike the mux's.
const queryRulesDoc = `{
  "openapi": "3.0.3",
  "info": {"title": "t", "version": "1"},
  "paths": {
    "/api/things": {
      "parameters": [{"name": "pageSize", "in": "query", "schema": {"type": "integer"}}],
      "get": {
        "parameters": [
          {"name": "filter.address.state.include", "in": "query", "schema": {"type": "array"}},
          {"$ref": "#/components/parameters/PageToken"},
          {"name": "X-Request-Id", "in": "header", "schema": {"type": "string"}}
        ],
        "responses": {"200": {"description": "ok"}}
      },
      "post": {"responses": {"200": {"description": "ok"}}}
    },
    "/api/thing/{thingId}": {
      "get": {
        "parameters": [{"name": "thingId", "in": "path", "required": true, "schema": {"type": "string"}}],
        "responses": {"200": {"description": "ok"}}
      }
    },
    "/api/thing/{thingId}:undelete": {
      "post": {
        "parameters": [{"name": "thingId", "in": "path", "required": true, "schema": {"type": "string"}}],
        "responses": {"200": {"description": "ok"}}
      }
    }
  },
  "components": {
    "parameters": {
      "PageToken": {"name": "pageToken", "in": "query", "schema": {"type": "string"}}
    }
  }
}`

// newQueryRulesMux serves the document's routes, the way generated
// handlers register them (variables by proto field path), and one route
// the document does not know, all answering 200 when reached.
func newQueryRulesMux(t *testing.T, doc string) *runtime.ServeMux {
	t.Helper()
	rules, err := NewQueryRules([]byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	mux := runtime.NewServeMux(runtime.WithMiddlewares(rules.Middleware))
	ok := func(w http.ResponseWriter, _ *http.Request, _ map[string]string) { w.WriteHeader(http.StatusOK) }
	for _, route := range [][2]string{
		{http.MethodGet, "/api/things"},
		{http.MethodPost, "/api/things"},
		{http.MethodGet, "/api/thing/{thing_id}"},
		{http.MethodPost, "/api/thing/{thing_id}:undelete"},
		{http.MethodDelete, "/api/thing/{thing_id}"},
		{http.MethodGet, "/healthz"},
	} {
		if err := mux.HandlePath(route[0], route[1], ok); err != nil {
			t.Fatal(err)
		}
	}
	return mux
}

func TestQueryRules(t *testing.T) {
	mux := newQueryRulesMux(t, queryRulesDoc)
	tests := []struct {
		method, target string
		refused        string // the parameter named in the 400, or "" for 200
	}{
		{"GET", "/api/things", ""},
		{"GET", "/api/things?pageSize=5&pageToken=x&filter.address.state.include=US-CA&filter.address.state.include=US-NY", ""},
		{"GET", "/api/things?page_size=5", "page_size"},
		{"GET", "/api/things?pageSize=5&zzz=1&aaa=2", "aaa"},
		{"GET", "/api/things?X-Request-Id=1", "X-Request-Id"},
		{"POST", "/api/things?pageSize=5", ""},
		{"POST", "/api/things?pageToken=x", "pageToken"},
		{"GET", "/api/thing/t1", ""},
		{"GET", "/api/thing/t1?thingId=t2", "thingId"},
		{"GET", "/api/thing/t1?verbose", "verbose"},
		{"POST", "/api/thing/t1:undelete", ""},
		{"POST", "/api/thing/t1:undelete?force=true", "force"},
		// Operations and routes the document does not describe are left alone.
		{"DELETE", "/api/thing/t1?force=true", ""},
		{"GET", "/healthz?probe=1", ""},
	}
	for _, tt := range tests {
		w := httptest.NewRecorder()
		mux.ServeHTTP(w, httptest.NewRequest(tt.method, tt.target, nil))
		if tt.refused == "" {
			if w.Code != http.StatusOK {
				t.Errorf("%s %s: %d %s", tt.method, tt.target, w.Code, w.Body)
			}
			continue
		}
		var got restv1.ErrorBody
		if err := protojson.Unmarshal(w.Body.Bytes(), &got); err != nil {
			t.Fatalf("%s %s: %v: %s", tt.method, tt.target, err, w.Body)
		}
		details := got.GetError().GetDetails()
		if w.Code != http.StatusBadRequest || got.GetError().GetStatus() != "INVALID_ARGUMENT" || len(details) != 1 ||
			details[0].GetField() != tt.refused || details[0].GetDescription() != "unknown query parameter" {
			t.Errorf("%s %s: %d %s, want 400 naming %s", tt.method, tt.target, w.Code, w.Body, tt.refused)
		}
	}

	w := httptest.NewRecorder()
	mux.ServeHTTP(w, httptest.NewRequest("GET", "/api/thing/t1?a=%zz", nil))
	if w.Code != http.StatusBadRequest {
		t.Errorf("a malformed query: %d %s", w.Code, w.Body)
	}
}

func TestNewQueryRulesRefusesWhatItCannotRead(t *testing.T) {
	for name, doc := range map[string]string{
		"not JSON":      `openapi: 3.0.3`,
		"OpenAPI 2":     `{"swagger": "2.0", "paths": {}}`,
		"bad reference": `{"openapi": "3.0.3", "paths": {"/a": {"get": {"parameters": [{"$ref": "#/components/parameters/Nope"}]}}}}`,
		"bad operation": `{"openapi": "3.0.3", "paths": {"/a": {"get": {"parameters": {}}}}}`,
	} {
		if _, err := NewQueryRules([]byte(doc)); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
}

func TestBlankVariables(t *testing.T) {
	for in, want := range map[string]string{
		"/api/workspaces":                      "/api/workspaces",
		"/api/workspace/{id}":                  "/api/workspace/{}",
		"/api/workspace/{id=*}:undelete":       "/api/workspace/{}:undelete",
		"/v1/{name=shelves/*}/books/{book}":    "/v1/{}/books/{}",
		"/api/workspace/{workspace_id=*}/keys": "/api/workspace/{}/keys",
	} {
		if got := blankVariables(in); got != want {
			t.Errorf("blankVariables(%q) = %q, want %q", in, got, want)
		}
	}
}
