package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"encoding/xml"
	"errors"
	"fmt"
	"html"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"
	"github.com/getkin/kin-openapi/routers/gorillamux"
)

// apiDoc is the OpenAPI document the gateway serves, loaded once the stack
// is up; the e2e client holds every exchange to it (see check).
var apiDoc *servedDocument

// servedDocument is an OpenAPI document with a router over its paths.
type servedDocument struct {
	doc       *openapi3.T
	router    routers.Router
	host      string // the gateway's host:port the router takes
	errorBody *openapi3.Schema
}

// loadServedDocument fetches GET /openapi.json from the gateway at base,
// checks that it is a valid OpenAPI 3 document using only formats the
// validator checks, and routes requests to base by its paths.
func loadServedDocument(ctx context.Context, base string) (*servedDocument, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, base+"/openapi.json", nil)
	if err != nil {
		return nil, err
	}
	resp, err := (&http.Client{Timeout: 30 * time.Second}).Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != http.StatusOK || !strings.HasPrefix(resp.Header.Get("Content-Type"), "application/json") {
		return nil, fmt.Errorf("GET /openapi.json: %d %s", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	defineFormats()
	openapi3filter.RegisterBodyDecoder("application/xml", xmlBodyDecoder)
	// The LTI launch answers an LMS's browser with pages: text.
	openapi3filter.RegisterBodyDecoder("text/html", openapi3filter.PlainBodyDecoder)
	loader := openapi3.NewLoader()
	doc, err := loader.LoadFromData(data)
	if err != nil {
		return nil, err
	}
	if err := doc.Validate(ctx, openapi3.EnableSchemaFormatValidation()); err != nil {
		return nil, fmt.Errorf("not a valid OpenAPI document: %w", err)
	}
	// The document names the local run's address; the tests' gateway is
	// on a port of its own (and check routes every stack's exchanges to
	// this one).
	doc.Servers = openapi3.Servers{{URL: base}}
	baseURL, err := url.Parse(base)
	if err != nil {
		return nil, err
	}
	router, err := gorillamux.NewRouter(doc)
	if err != nil {
		return nil, err
	}
	errorBody := doc.Components.Schemas["ErrorBody"]
	if errorBody == nil {
		return nil, errors.New("the document has no ErrorBody schema")
	}
	return &servedDocument{doc: doc, router: router, host: baseURL.Host, errorBody: errorBody.Value}, nil
}

// defineFormats teaches kin-openapi the string formats the document uses
// beyond those it checks by itself (date, date-time, byte); validating the
// document with EnableSchemaFormatValidation refuses any other.
func defineFormats() {
	openapi3.DefineStringFormatValidator("uuid", openapi3.NewRegexpFormatValidator(openapi3.FormatOfStringForUUIDOfRFC4122))
	openapi3.DefineStringFormatValidator("email", openapi3.NewRegexpFormatValidator(openapi3.FormatOfStringForEmail))
	openapi3.DefineStringFormatValidator("uri", openapi3.NewCallbackValidator(func(s string) error {
		if u, err := url.Parse(s); err != nil || !u.IsAbs() || u.Host == "" {
			return errors.New("not an absolute URI")
		}
		return nil
	}))
}

// xmlBodyDecoder reads an XML answer (the LTI configuration) for response
// validation: it must be well-formed, and it is then the string its schema
// describes. kin-openapi has no XML decoder of its own.
func xmlBodyDecoder(body io.Reader, _ http.Header, _ *openapi3.SchemaRef, _ openapi3filter.EncodingFn) (any, error) {
	data, err := io.ReadAll(body)
	if err != nil {
		return nil, err
	}
	dec := xml.NewDecoder(bytes.NewReader(data))
	for {
		if _, err := dec.Token(); err == io.EOF {
			break
		} else if err != nil {
			return nil, &openapi3filter.ParseError{Kind: openapi3filter.KindInvalidFormat, Cause: fmt.Errorf("not well-formed XML: %w", err)}
		}
	}
	return string(data), nil
}

// check holds one exchange to the document and reports each difference
// with t.Errorf:
//   - the answer must be one its operation declares: the status (there is
//     no default response to fall back on), every header declared for it,
//     and a body of its schema with no field the schema leaves out;
//   - a request the server accepted (below 400) must be one the operation
//     takes, with credentials of its scheme; one it refused with 400 must be
//     one the operation refuses too, unless a rule the document states only
//     in prose refused it (proseRules);
//   - a path or method the document lacks is fine outside /api/ (health,
//     readiness, the SDK's files); under /api/ only when refused with 404 or
//     405 (or 400 for a path that is not UTF-8), in the error shape.
//
// req is the request as sent; its body is read again through GetBody.
func (d *servedDocument) check(t *testing.T, req *http.Request, status int, header http.Header, body []byte) {
	t.Helper()
	what := fmt.Sprintf("OpenAPI: %s %s answered %d", req.Method, req.URL.RequestURI(), status)
	sent := req.Clone(context.Background())
	sent.Body = http.NoBody
	if req.GetBody != nil {
		b, err := req.GetBody()
		if err != nil {
			t.Errorf("%s: read the request body again: %v", what, err)
			return
		}
		sent.Body = b
	}
	// A test's own stack serves the same document on another port.
	sent.URL.Host, sent.Host = d.host, d.host

	route, params, err := d.router.FindRoute(sent)
	if err != nil {
		if !strings.HasPrefix(req.URL.Path, "/api/") {
			return
		}
		// A path that is not UTF-8 is refused as such (400), whether or
		// not it would name an operation.
		refused := status == http.StatusNotFound || status == http.StatusMethodNotAllowed ||
			status == http.StatusBadRequest && !utf8.ValidString(req.URL.Path)
		if !refused {
			t.Errorf("%s: the document has no such operation (%v)", what, err)
			return
		}
		d.checkErrorShape(t, what, header, body)
		return
	}

	ctx := context.Background()
	if status < 400 || status == http.StatusBadRequest {
		opts := &openapi3filter.Options{
			MultiError:                        true,
			AuthenticationFunc:                schemeAgrees,
			RejectWhenRequestBodyNotSpecified: true,
		}
		opts.WithCustomSchemaErrorFunc(briefly)
		in := &openapi3filter.RequestValidationInput{Request: sent, PathParams: params, Route: route, Options: opts}
		err := openapi3filter.ValidateRequest(ctx, in)
		switch {
		case status < 400 && err != nil:
			t.Errorf("%s: the server took a request the document refuses: %v", what, err)
		case status == http.StatusBadRequest && err == nil:
			if rule := proseRule(body); rule == "" {
				t.Errorf("%s: the server refused a request the document takes, by no rule the document states in prose: %s", what, body)
			}
		}
	}

	declared := route.Operation.Responses.Status(status)
	if declared == nil || declared.Value == nil {
		t.Errorf("%s: operation %s declares no %d response", what, route.Operation.OperationID, status)
		return
	}
	opts := &openapi3filter.Options{MultiError: true, IncludeResponseStatus: true}
	opts.WithCustomSchemaErrorFunc(briefly)
	out := &openapi3filter.ResponseValidationInput{
		RequestValidationInput: &openapi3filter.RequestValidationInput{Request: sent, PathParams: params, Route: route},
		Status:                 status,
		Header:                 header,
		Options:                opts,
	}
	out.SetBodyBytes(body)
	if err := openapi3filter.ValidateResponse(ctx, out); err != nil {
		t.Errorf("%s: the answer is not the one documented: %v", what, err)
	}
	// Every header the document declares required for an answer is one
	// the gateway sends with it (X-Request-Id always, ETag with a
	// workspace, WWW-Authenticate with 401, Retry-After with 429 and 503),
	// so a client may count on it. The rate-limit fields are declared but
	// not required: they come only while limits are on.
	for name, h := range declared.Value.Headers {
		if h.Value != nil && h.Value.Required && header.Get(name) == "" {
			t.Errorf("%s: no %s header, which the document declares", what, name)
		}
	}
	if media := declared.Value.Content.Get("application/json"); media != nil && media.Schema != nil {
		var value any
		if json.Unmarshal(body, &value) == nil {
			if extra := undocumented(media.Schema.Value, value, ""); len(extra) > 0 {
				t.Errorf("%s: fields the document does not describe: %s", what, strings.Join(extra, ", "))
			}
		}
	}
}

// checkErrorShape checks an answer the document does not declare, a
// routing error, against the one error shape every failure has.
func (d *servedDocument) checkErrorShape(t *testing.T, what string, header http.Header, body []byte) {
	t.Helper()
	if header.Get("X-Request-Id") == "" {
		t.Errorf("%s: no X-Request-Id header", what)
	}
	var value any
	if err := json.Unmarshal(body, &value); err != nil {
		t.Errorf("%s: the error body is not JSON: %v", what, err)
		return
	}
	if err := d.errorBody.VisitJSON(value, openapi3.MultiErrors(), openapi3.VisitAsResponse(),
		openapi3.SetSchemaErrorMessageCustomizer(briefly)); err != nil {
		t.Errorf("%s: the error body is not an ErrorBody: %v", what, err)
	}
}

// briefly is how a schema error reads in a report: where, why, and the
// value cut short, without the schema kin-openapi would print.
func briefly(err *openapi3.SchemaError) string {
	reason := err.Reason
	if reason == "" {
		reason = "does not match the schema's " + err.SchemaField
	}
	value, _ := json.Marshal(err.Value)
	if len(value) > 80 {
		value = append(value[:77], "..."...)
	}
	return fmt.Sprintf("at /%s: %s (value %s)", strings.Join(err.JSONPointer(), "/"), reason, value)
}

// schemeAgrees is the credential check of request validation. Only
// requests the server accepted are validated, so the server has judged the
// credentials; what is left is that they are of the scheme the operation
// declares (Basic or Bearer).
func schemeAgrees(_ context.Context, in *openapi3filter.AuthenticationInput) error {
	want := in.SecurityScheme.Scheme
	got, _, _ := strings.Cut(in.RequestValidationInput.Request.Header.Get("Authorization"), " ")
	if !strings.EqualFold(got, want) {
		if got == "" {
			got = "no"
		}
		return fmt.Errorf("%s credentials where the document asks for %s", got, want)
	}
	return nil
}

// undocumented lists the fields of value, by JSON path, that schema does
// not describe: fields a client generated from the document would drop.
// An object schema that names properties counts as closed unless its
// additionalProperties says otherwise (OpenAPI would leave it open);
// schemas without properties (free-form objects) are not looked into.
func undocumented(schema *openapi3.Schema, value any, path string) []string {
	var out []string
	switch v := value.(type) {
	case map[string]any:
		if len(schema.Properties) == 0 {
			return nil
		}
		for name, field := range v {
			p := schema.Properties[name]
			if p == nil {
				if schema.AdditionalProperties.Schema == nil &&
					(schema.AdditionalProperties.Has == nil || !*schema.AdditionalProperties.Has) {
					out = append(out, strings.TrimPrefix(path+"."+name, "."))
				}
				continue
			}
			out = append(out, undocumented(p.Value, field, path+"."+name)...)
		}
	case []any:
		if schema.Items == nil {
			return nil
		}
		for _, item := range v {
			for _, f := range undocumented(schema.Items.Value, item, path+"[]") {
				if !slices.Contains(out, f) {
					out = append(out, f)
				}
			}
		}
	}
	slices.Sort(out)
	return out
}

// proseRules are the rules the service checks that the document states in
// its descriptions only, because JSON Schema (as OpenAPI 3.0 has it) cannot
// say them, or not in a way generated clients take: each is a field and
// the start of the error's description, which the document quotes where it
// states the rule ("*": any field, for the rules of the document's
// introduction). A 400 for a request the document takes must be one of
// these.
var proseRules = []struct{ field, description string }{
	// info.description: what every operation refuses.
	{"*", "unknown query parameter"},
	{"*", "given more than once"},
	{"*", "not valid UTF-8"},
	{"*", "expected true or false"},
	// The If-Match parameter's description.
	{"If-Match", "must be entity tags in printable ASCII"},
	// The fields' descriptions.
	{"pageToken", "is not a token from this list"},
	{"id", "the identifier cannot be modified"},
	{"appKey", "the identifier cannot be modified"},
	{"registrationId", "the identifier cannot be modified"},
	{"webhookId", "the identifier cannot be modified"},
	{"launchId", "the identifier cannot be modified"},
	{"parentWorkspaceId", "a workspace cannot be its own parent"},
	{"parentWorkspaceId", "would make a cycle"},
	{"expireAfter", "must be between 0s and 604800s"},
	{"overlap", "must be between 0s and 604800s"},
	{"address.state", "must start with the country code"},
	{"address.country", "is required when address.state is set"},
	// An LTI 1.3 registration's issuer and URLs: https on a public host
	// (http, loopback and private addresses only for the hosts
	// LTI_ALLOW_INSECURE_HOSTS names), a valid host and port.
	{"issuer", "must be a public https URL"},
	{"authLoginUrl", "must be a public https URL"},
	{"jwksUrl", "must be a public https URL"},
	{"authTokenUrl", "must be a public https URL"},
	// A webhook's URL, under the same rule (WEBHOOK_ALLOW_INSECURE_HOSTS),
	// and a recovery's since: an event id or an RFC 3339 time.
	{"url", "must be a public https URL"},
	{"since", "must be an event id"},
	// The LTI 1.3 login initiation's, which depend on PUBLIC_BASE_URL and
	// on the issuer's registrations, and its parameters' bound in bytes.
	{"target_link_uri", "must be this tool's launch URL"},
	{"client_id", "has several registrations"},
	{"*", "is longer than 2048 bytes"},
	// The LTI 1.3 launch's 400: "a missing or malformed claim" of the
	// id_token, which its refusal names ("the id_token's version claim
	// must be 1.3.0").
	{"id_token", "the id_token's"},
	// A registration link's 400 for a platform configuration the tool
	// cannot register with, which the page's reason says.
	{"openid_configuration", "The platform's OpenID configuration cannot be used to register the tool"},
	// A score's maximum, which JSON Schema's minimum cannot hold above 0.
	{"scoreMaximum", "must be a number over 0"},
	// A portal link's way back: https (http on a loopback host only),
	// without a user name or password, which format uri does not say.
	{"returnUrl", "must be an absolute https URL"},
}

// proseRule returns the rule of proseRules that a 400's body names, or "".
func proseRule(body []byte) string {
	if reason, ok := pageReason(body); ok {
		// An LTI page names no field: its reason quotes the rule.
		for _, r := range proseRules {
			if strings.Contains(reason, r.description) {
				return r.field + ": " + r.description
			}
		}
		return ""
	}
	var e struct {
		Error struct {
			Details []struct {
				Field       string `json:"field"`
				Description string `json:"description"`
			} `json:"details"`
		} `json:"error"`
	}
	if json.Unmarshal(body, &e) != nil {
		return ""
	}
	for _, d := range e.Error.Details {
		for _, r := range proseRules {
			if (r.field == "*" || d.Field == r.field) && strings.HasPrefix(d.Description, r.description) {
				return r.field + ": " + r.description
			}
		}
	}
	return ""
}

// pageReason is the reason an LTI refusal page gives (lti/refusal.go), as
// text.
func pageReason(body []byte) (string, bool) {
	_, after, ok := strings.Cut(string(body), `<p id="reason">`)
	reason, _, closed := strings.Cut(after, "</p>")
	return html.UnescapeString(reason), ok && closed
}
