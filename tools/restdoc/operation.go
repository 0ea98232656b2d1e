package restdoc

import (
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"google.golang.org/protobuf/compiler/protogen"

	restv1 "github.com/liveproctor/workspaces/pkg/gen/rest/v1"
	"github.com/liveproctor/workspaces/pkg/grpcfault"
	"github.com/liveproctor/workspaces/pkg/restrules"
)

// errorBodyMessage is the message every error answer is.
const errorBodyMessage = "rest.v1.ErrorBody"

// Errors every operation may answer, whatever it does: a malformed request
// or an unknown query parameter, a body over the limit, a bug, a dependency
// that is down, a deadline that passed.
var commonErrors = []string{"INVALID_ARGUMENT", "TOO_LARGE", "INTERNAL", "UNAVAILABLE", "DEADLINE_EXCEEDED"}

// Errors by the credentials an operation takes: a Basic operation also
// refuses key pairs without REST access (the LTI pair).
// Every authenticated operation is rate limited (THROTTLED).
var securityErrors = map[restv1.Security][]string{
	restv1.Security_SECURITY_BASIC_UNSPECIFIED: {"UNAUTHENTICATED", "PERMISSION_DENIED", "THROTTLED"},
	restv1.Security_SECURITY_BEARER:            {"UNAUTHENTICATED", "THROTTLED"},
}

// rateLimitHeaders are the IETF rate-limit fields, which every answer of an
// authenticated operation may carry and a 429 always does.
var rateLimitHeaders = []string{"RateLimit-Policy", "RateLimit"}

// bodyMethods take a body, and so may answer 415 for one that is not JSON.
var bodyMethods = []string{http.MethodPost, http.MethodPut, http.MethodPatch}

// Response headers by error reason, named as in the base document's
// components.headers.
var errorHeaders = map[string][]string{
	"UNAUTHENTICATED": {"WWW-Authenticate"},
	"UNAVAILABLE":     {"Retry-After"},
	"THROTTLED":       append([]string{"Retry-After"}, rateLimitHeaders...),
}

// headerRefs are the base document's components.headers by header name.
var headerRefs = map[string]string{
	"X-Request-Id":     "RequestId",
	"ETag":             "ETag",
	"WWW-Authenticate": "WWWAuthenticate",
	"Retry-After":      "RetryAfter",
	"RateLimit-Policy": "RateLimitPolicy",
	"RateLimit":        "RateLimit",
}

type generator struct {
	schemas *schemas
	methods map[string]*protogen.Method
	// errorStatuses collects the HTTP statuses operations answer with, for
	// components.responses.
	errorStatuses map[int]bool
}

func newGenerator(files []*protogen.File) (*generator, error) {
	g := &generator{
		schemas:       newSchemas(files),
		methods:       map[string]*protogen.Method{},
		errorStatuses: map[int]bool{},
	}
	for _, f := range files {
		for _, s := range f.Services {
			for _, m := range s.Methods {
				g.methods[string(m.Desc.FullName())] = m
			}
		}
	}
	return g, nil
}

// build adds the operations of bindings, their schemas and the error
// responses to doc.
func (g *generator) build(doc *object, bindings []binding) error {
	errorBody, ok := g.schemas.messages[errorBodyMessage]
	if !ok {
		return fmt.Errorf("%s is not among the protos", errorBodyMessage)
	}
	// First every message's directions, so that names are settled before
	// any schema is written.
	g.schemas.use(errorBody, response)
	for _, b := range bindings {
		m, err := g.method(b)
		if err != nil {
			return err
		}
		if b.body != "" {
			g.schemas.use(m.Input, request)
		}
		if out, err := g.responseMessage(m, b); err != nil {
			return err
		} else if out != nil {
			g.schemas.use(out, response)
		}
	}

	paths := childObject(doc, "paths")
	for _, b := range bindings {
		m, _ := g.method(b)
		path, op, err := g.operation(m, b)
		if err != nil {
			return fmt.Errorf("%s %s: %w", b.method, b.template, err)
		}
		item := childObject(paths, path)
		item.set(strings.ToLower(b.method), op)
	}

	components := childObject(doc, "components")
	for _, name := range []string{"headers", "parameters", "securitySchemes"} {
		if _, ok := components.get(name); !ok {
			return fmt.Errorf("the base document has no components.%s", name)
		}
	}
	errorRef, err := g.schemas.ref(errorBody, response)
	if err != nil {
		return err
	}
	// The error responses by status, then the base document's own (the
	// hand-written routes' pages).
	responses := newObject()
	statuses := make([]int, 0, len(g.errorStatuses))
	for s := range g.errorStatuses {
		statuses = append(statuses, s)
	}
	slices.Sort(statuses)
	for _, status := range statuses {
		responses.set(responseName(status), errorResponse(status, errorRef))
	}
	if base, ok := components.get("responses"); ok {
		own, isObject := base.(*object)
		if !isObject {
			return fmt.Errorf("the base document's components.responses is not an object")
		}
		for _, name := range own.keys {
			if _, taken := responses.get(name); taken {
				return fmt.Errorf("components.responses.%s: the base document and the error table both define it", name)
			}
			v, _ := own.get(name)
			responses.set(name, v)
		}
	}
	components.set("responses", responses)
	components.set("schemas", g.schemas.components)
	return nil
}

func (g *generator) method(b binding) (*protogen.Method, error) {
	m, ok := g.methods[b.selector]
	if !ok {
		return nil, fmt.Errorf("http rule for %s: no such method", b.selector)
	}
	return m, nil
}

// responseMessage is the message a binding answers with; nil when the
// answer is one repeated field of it (response_body), whose elements are
// then the message used.
func (g *generator) responseMessage(m *protogen.Method, b binding) (*protogen.Message, error) {
	if b.responseBody == "" {
		return m.Output, nil
	}
	f, err := fieldNamed(m.Output, b.responseBody)
	if err != nil {
		return nil, err
	}
	return f.Message, nil
}

// operation is the OpenAPI operation of one binding, and its path in the
// document (variables named by their JSON names).
func (g *generator) operation(m *protogen.Method, b binding) (string, *object, error) {
	opt := restrules.Operation(m.Desc)
	if opt == nil || opt.GetSummary() == "" || opt.GetTag() == "" {
		return "", nil, fmt.Errorf("%s has an HTTP rule but no rest.v1.operation with a summary and a tag", m.Desc.FullName())
	}
	op := newObject()
	op.set("tags", []string{opt.GetTag()})
	op.set("summary", opt.GetSummary())
	if d := opt.GetDescription(); d != "" {
		op.set("description", strings.TrimSpace(d))
	}
	opID := lowerFirst(m.GoName)
	if b.additional {
		opID += upperFirst(strings.ToLower(b.method))
	}
	op.set("operationId", opID)

	path := b.template
	vars, err := pathVariables(b.template)
	if err != nil {
		return "", nil, err
	}
	pathBound := map[string]bool{}
	var params []any
	for _, v := range vars {
		f, err := fieldNamed(m.Input, v)
		if err != nil {
			return "", nil, err
		}
		pathBound[v] = true
		schema, err := g.schemas.value(f, fieldRules(f), request)
		if err != nil {
			return "", nil, err
		}
		name := f.Desc.JSONName()
		path = strings.Replace(path, "{"+v+"}", "{"+name+"}", 1)
		params = append(params, parameter(name, "path", true, describe(f.Comments.Leading), schema))
	}
	switch b.body {
	case "":
		if err := g.queryParameters(m.Input, "", pathBound, &params); err != nil {
			return "", nil, err
		}
	case "*":
		ref, err := g.schemas.ref(m.Input, request)
		if err != nil {
			return "", nil, err
		}
		body := newObject()
		body.set("required", hasRequiredField(m.Input))
		body.set("content", jsonContent(ref))
		op.set("requestBody", body)
	default:
		return "", nil, fmt.Errorf("a body of one field (%s) is not supported", b.body)
	}
	if opt.GetIfMatch() {
		params = append(params, componentRef("parameters", "IfMatch"))
	}
	params = append(params, componentRef("parameters", "RequestId"))
	op.set("parameters", params)

	responses, err := g.responses(m, b, opt)
	if err != nil {
		return "", nil, err
	}
	op.set("responses", responses)
	switch opt.GetSecurity() {
	case restv1.Security_SECURITY_BASIC_UNSPECIFIED:
		op.set("security", []any{map[string][]string{"basic": {}}})
	case restv1.Security_SECURITY_BEARER:
		op.set("security", []any{map[string][]string{"bearer": {}}})
	case restv1.Security_SECURITY_NONE:
		op.set("security", []any{})
	}
	op.order("tags", "summary", "description", "operationId", "parameters", "requestBody")
	return path, op, nil
}

// queryParameters adds a parameter for every published scalar or repeated
// scalar field of m, nested messages flattened with dots between JSON names
// (filter.address.state.include), as the gateway reads them.
func (g *generator) queryParameters(m *protogen.Message, prefix string, skip map[string]bool, params *[]any) error {
	for _, f := range m.Fields {
		rules := fieldRules(f)
		if rules.GetHidden() || skip[string(f.Desc.Name())] {
			continue
		}
		name := prefix + f.Desc.JSONName()
		if f.Message != nil && !wellKnown(f.Message) {
			if f.Desc.IsList() {
				return fmt.Errorf("%s: a repeated message cannot be a query parameter", f.Desc.FullName())
			}
			if err := g.queryParameters(f.Message, name+".", nil, params); err != nil {
				return err
			}
			continue
		}
		schema, err := g.schemas.field(f, rules, request)
		if err != nil {
			return err
		}
		description, _ := schema.del("description")
		text, _ := description.(string)
		*params = append(*params, parameter(name, "query", rules.GetRequired(), text, schema))
	}
	return nil
}

// responses are the success answer and every error the operation answers.
func (g *generator) responses(m *protogen.Method, b binding, opt *restv1.Operation) (*object, error) {
	success := newObject()
	var schema *object
	var description string
	if b.responseBody != "" {
		f, err := fieldNamed(m.Output, b.responseBody)
		if err != nil {
			return nil, err
		}
		if schema, err = g.schemas.field(f, fieldRules(f), response); err != nil {
			return nil, err
		}
		description = describe(f.Comments.Leading)
	} else {
		var err error
		if schema, err = g.schemas.ref(m.Output, response); err != nil {
			return nil, err
		}
		description = describe(m.Output.Comments.Leading)
	}
	if description == "" {
		description = "Done."
	}
	success.set("description", description)
	headers := newObject()
	headers.set("X-Request-Id", componentRef("headers", headerRefs["X-Request-Id"]))
	if opt.GetEtag() {
		headers.set("ETag", componentRef("headers", headerRefs["ETag"]))
	}
	if opt.GetSecurity() != restv1.Security_SECURITY_NONE {
		for _, h := range rateLimitHeaders {
			headers.set(h, componentRef("headers", headerRefs[h]))
		}
	}
	success.set("headers", headers)
	success.set("content", jsonContent(schema))

	reasons := append(append([]string{}, commonErrors...), securityErrors[opt.GetSecurity()]...)
	if slices.Contains(bodyMethods, b.method) {
		reasons = append(reasons, "UNSUPPORTED_MEDIA_TYPE")
	}
	if b.body != "" {
		// The request deadline covers reading the body: one that stops
		// arriving is 408.
		reasons = append(reasons, "REQUEST_TIMEOUT")
	}
	reasons = append(reasons, opt.GetErrors()...)
	statuses := map[int]bool{}
	for _, r := range reasons {
		spec, ok := grpcfault.SpecByReason(r)
		if !ok {
			return nil, fmt.Errorf("%s: unknown error reason %q", m.Desc.FullName(), r)
		}
		statuses[spec.HTTPStatus] = true
		g.errorStatuses[spec.HTTPStatus] = true
	}
	sorted := make([]int, 0, len(statuses))
	for s := range statuses {
		sorted = append(sorted, s)
	}
	slices.Sort(sorted)
	out := newObject()
	out.set(strconv.Itoa(restrules.SuccessStatus(m.Desc)), success)
	for _, s := range sorted {
		out.set(strconv.Itoa(s), componentRef("responses", responseName(s)))
	}
	return out, nil
}

// errorResponse describes one HTTP status of error answers: what each kind
// answered with it means, and its headers.
func errorResponse(status int, errorRef *object) *object {
	var meanings []string
	headers := newObject()
	headers.set("X-Request-Id", componentRef("headers", headerRefs["X-Request-Id"]))
	for _, spec := range grpcfault.Specs() {
		if spec.HTTPStatus != status {
			continue
		}
		meanings = append(meanings, spec.Meaning)
		for _, h := range errorHeaders[spec.Reason] {
			headers.set(h, componentRef("headers", headerRefs[h]))
		}
	}
	o := newObject()
	o.set("description", strings.Join(meanings, " "))
	o.set("headers", headers)
	o.set("content", jsonContent(errorRef))
	return o
}

// responseName names an error status's component: 404 is NotFound.
func responseName(status int) string {
	return strings.NewReplacer(" ", "", "-", "").Replace(http.StatusText(status))
}

func parameter(name, in string, required bool, description string, schema *object) *object {
	p := newObject()
	p.set("name", name)
	p.set("in", in)
	if description != "" {
		p.set("description", description)
	}
	if required {
		p.set("required", true)
	}
	p.set("schema", schema)
	return p
}

func jsonContent(schema *object) *object {
	media := newObject()
	media.set("schema", schema)
	c := newObject()
	c.set("application/json", media)
	return c
}

func componentRef(kind, name string) *object {
	o := newObject()
	o.set("$ref", "#/components/"+kind+"/"+name)
	return o
}

// childObject returns parent[key], adding an empty object when absent.
func childObject(parent *object, key string) *object {
	if v, ok := parent.get(key); ok {
		if o, ok := v.(*object); ok {
			return o
		}
	}
	o := newObject()
	parent.set(key, o)
	return o
}

// fieldNamed returns m's field with the proto name name; only top-level
// fields are supported in paths and response bodies.
func fieldNamed(m *protogen.Message, name string) (*protogen.Field, error) {
	for _, f := range m.Fields {
		if string(f.Desc.Name()) == name {
			return f, nil
		}
	}
	return nil, fmt.Errorf("%s has no field %q", m.Desc.FullName(), name)
}

func hasRequiredField(m *protogen.Message) bool {
	for _, f := range m.Fields {
		if fieldRules(f).GetRequired() {
			return true
		}
	}
	return false
}

func lowerFirst(s string) string { return strings.ToLower(s[:1]) + s[1:] }
func upperFirst(s string) string { return strings.ToUpper(s[:1]) + s[1:] }
