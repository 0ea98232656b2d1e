package restcheck

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"

	"github.com/grpc-ecosystem/grpc-gateway/v2/runtime"

	"github.com/liveproctor/workspaces/gateway/internal/httperr"
	"github.com/liveproctor/workspaces/pkg/fault"
)

// QueryRules holds the query parameters each operation of the published
// OpenAPI document declares. Its middleware answers 400 for a query
// parameter the operation does not declare, on every route, including
// those whose generated handlers never read the query.
type QueryRules struct {
	// declared maps an operation's method and path template, its variables
	// blanked ("GET /api/workspace/{}"), to its query parameters' names.
	declared map[string]map[string]bool
}

// openAPIMethods are the keys of an OpenAPI path item that are operations.
var openAPIMethods = map[string]string{
	"get": http.MethodGet, "put": http.MethodPut, "post": http.MethodPost, "delete": http.MethodDelete,
	"options": http.MethodOptions, "head": http.MethodHead, "patch": http.MethodPatch, "trace": http.MethodTrace,
}

// openAPIParameter is a parameter object, or a reference to one under
// components.parameters.
type openAPIParameter struct {
	Ref    string `json:"$ref"`
	Name   string `json:"name"`
	In     string `json:"in"`
	Schema struct {
		Type string `json:"type"`
	} `json:"schema"`
}

// anyName stands for every query parameter name: an operation that
// declares a free-form query (an object schema, style form, exploded: the
// LTI launch) takes parameters of any name.
const anyName = "*"

// openAPIDocument is what NewQueryRules reads of an OpenAPI 3 document.
type openAPIDocument struct {
	OpenAPI    string                                `json:"openapi"`
	Paths      map[string]map[string]json.RawMessage `json:"paths"`
	Components struct {
		Parameters map[string]openAPIParameter `json:"parameters"`
	} `json:"components"`
}

// NewQueryRules reads the query parameters of every operation in doc, an
// OpenAPI 3 document in JSON, counting those its path item declares for all
// of its operations.
func NewQueryRules(doc []byte) (*QueryRules, error) {
	var d openAPIDocument
	if err := json.Unmarshal(doc, &d); err != nil {
		return nil, fmt.Errorf("read the OpenAPI document: %w", err)
	}
	if !strings.HasPrefix(d.OpenAPI, "3.") {
		return nil, fmt.Errorf("read the OpenAPI document: version %q is not OpenAPI 3", d.OpenAPI)
	}
	q := &QueryRules{declared: map[string]map[string]bool{}}
	for path, item := range d.Paths {
		if err := q.readPathItem(&d, path, item); err != nil {
			return nil, err
		}
	}
	return q, nil
}

// readPathItem records the query parameters of each operation of the path
// item at path: its own and those the path item declares for all.
func (q *QueryRules) readPathItem(d *openAPIDocument, path string, item map[string]json.RawMessage) error {
	var shared []openAPIParameter
	if raw, ok := item["parameters"]; ok {
		if err := json.Unmarshal(raw, &shared); err != nil {
			return fmt.Errorf("read the OpenAPI document: %s parameters: %w", path, err)
		}
	}
	for key, raw := range item {
		method, isOperation := openAPIMethods[key]
		if !isOperation {
			continue
		}
		var op struct {
			Parameters []openAPIParameter `json:"parameters"`
		}
		if err := json.Unmarshal(raw, &op); err != nil {
			return fmt.Errorf("read the OpenAPI document: %s %s: %w", key, path, err)
		}
		names := map[string]bool{}
		if err := d.addQueryNames(names, shared); err != nil {
			return err
		}
		if err := d.addQueryNames(names, op.Parameters); err != nil {
			return err
		}
		q.declared[method+" "+blankVariables(path)] = names
	}
	return nil
}

// addQueryNames adds the names of the query parameters among params to
// names, following references to components.parameters; a free-form query
// adds anyName.
func (d *openAPIDocument) addQueryNames(names map[string]bool, params []openAPIParameter) error {
	for _, p := range params {
		if p.Ref != "" {
			name, ok := strings.CutPrefix(p.Ref, "#/components/parameters/")
			target, found := d.Components.Parameters[name]
			if !ok || !found {
				return fmt.Errorf("read the OpenAPI document: unresolved parameter %s", p.Ref)
			}
			p = target
		}
		switch {
		case p.In == "query" && p.Schema.Type == "object":
			names[anyName] = true
		case p.In == "query":
			names[p.Name] = true
		}
	}
	return nil
}

// blankVariables empties the variables of a path template, so that a
// document's /api/workspace/{id}:undelete and the mux's
// /api/workspace/{id=*}:undelete, whose variables are proto field paths,
// read the same: /api/workspace/{}:undelete.
func blankVariables(template string) string {
	var b strings.Builder
	b.Grow(len(template))
	for {
		open := strings.IndexByte(template, '{')
		if open < 0 {
			break
		}
		end := strings.IndexByte(template[open:], '}')
		if end < 0 {
			break
		}
		b.WriteString(template[:open+1])
		template = template[open+end:]
	}
	b.WriteString(template)
	return b.String()
}

// Middleware refuses a request to an operation of the document whose query
// has a parameter the operation does not declare, naming it. Routes the
// document does not describe (/healthz, /readyz, the SDK's files) are left
// alone, and a request without a query costs nothing.
func (q *QueryRules) Middleware(next runtime.HandlerFunc) runtime.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request, params map[string]string) {
		if r.URL.RawQuery != "" {
			if pattern, ok := runtime.HTTPPattern(r.Context()); ok {
				if declared, known := q.declared[r.Method+" "+blankVariables(pattern.String())]; known {
					if refuseUndeclared(w, r, declared) {
						return
					}
				}
			}
		}
		next(w, r, params)
	}
}

// refuseUndeclared answers 400 and reports true when r's query is malformed
// or has a parameter outside declared (the first by name, so the answer
// does not depend on map order).
func refuseUndeclared(w http.ResponseWriter, r *http.Request, declared map[string]bool) bool {
	query, err := url.ParseQuery(r.URL.RawQuery)
	if err != nil {
		httperr.Write(w, r, fault.Invalid, "the query string is malformed")
		return true
	}
	unknown, found := "", false
	for name := range query {
		if !declared[name] && !declared[anyName] && (!found || name < unknown) {
			unknown, found = name, true
		}
	}
	if !found {
		return false
	}
	refused := queryError(unknown, unknownQueryParameter, "")
	httperr.Write(w, r, fault.Invalid, refused.message, fault.FieldViolation{Field: refused.field, Description: refused.description})
	return true
}
