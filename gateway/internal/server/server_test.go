package server_test

import (
	"bytes"
	"encoding/json"
	"io"
	"maps"
	"net/http"
	"net/http/httptest"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc/metadata"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/wrapperspb"

	"github.com/liveproctor/workspaces/pkg/fault"
	restv1 "github.com/liveproctor/workspaces/pkg/gen/rest/v1"
	workspacev1 "github.com/liveproctor/workspaces/pkg/gen/workspace/v1"
	"github.com/liveproctor/workspaces/pkg/grpcfault"
)

// checkError asserts an answer is a rest.v1.ErrorBody with the given HTTP
// status and gRPC status name, and returns its error.
func checkError(t *testing.T, resp *http.Response, body []byte, wantHTTP int, wantStatus string) *restv1.Error {
	t.Helper()
	if resp.StatusCode != wantHTTP {
		t.Errorf("HTTP status = %d, want %d; body %s", resp.StatusCode, wantHTTP, body)
	}
	if ct := resp.Header.Get("Content-Type"); ct != "application/json" {
		t.Errorf("Content-Type = %q", ct)
	}
	var raw struct {
		Error map[string]json.RawMessage `json:"error"`
	}
	if err := json.Unmarshal(body, &raw); err != nil || raw.Error == nil {
		t.Fatalf("body %s is not the error shape: %v", body, err)
	}
	if keys := slices.Sorted(maps.Keys(raw.Error)); !slices.Equal(keys, []string{"code", "details", "message", "requestId", "status"}) {
		t.Errorf("error fields %q, want code, status, message, requestId and details", keys)
	}
	if d := raw.Error["details"]; !bytes.HasPrefix(d, []byte("[")) {
		t.Errorf("details is not an array: %s", body)
	}
	if c := raw.Error["code"]; !bytes.Equal(c, []byte(strconv.Itoa(wantHTTP))) {
		t.Errorf("code is %s, want the number %d", c, wantHTTP)
	}
	var got restv1.ErrorBody
	if err := protojson.Unmarshal(body, &got); err != nil {
		t.Fatalf("body %s: %v", body, err)
	}
	p := got.GetError()
	if p.GetCode() != int32(wantHTTP) || p.GetStatus() != wantStatus {
		t.Errorf("error = %d %s, want %d %s (%s)", p.GetCode(), p.GetStatus(), wantHTTP, wantStatus, body)
	}
	if id := resp.Header.Get("X-Request-Id"); id == "" || p.GetRequestId() != id {
		t.Errorf("requestId %q, header %q", p.GetRequestId(), id)
	}
	return p
}

func sampleWorkspace() *workspacev1.Workspace {
	return &workspacev1.Workspace{
		Typename: "Workspace", Id: "w1", WorkspaceId: "w1", Name: "Springfield", Type: "DISTRICT",
		Sk: "workspace", SchemaVersion: "2026-01-01",
		CreateTime: "2026-11-22T07:46:00.000Z", UpdateTime: "2026-11-22T07:46:00.000Z", Etag: `"1"`,
	}
}

var hexID = regexp.MustCompile(`^[0-9a-f]{32}$`)

func TestRequestID(t *testing.T) {
	e := newEnv(t, options{})
	e.workspaces.workspace = sampleWorkspace()

	resp, _ := e.do(t, http.MethodGet, "/api/workspace/w1", nil, nil)
	generated := resp.Header.Get("X-Request-Id")
	if !hexID.MatchString(generated) {
		t.Errorf("generated id %q", generated)
	}
	md, _ := e.workspaces.received()
	if got := md.Get("x-request-id"); !slices.Equal(got, []string{generated}) {
		t.Errorf("forwarded %q, want %q", got, generated)
	}

	sane := "req-1.2_3:abc"
	resp, _ = e.do(t, http.MethodGet, "/api/workspace/w1", nil, map[string]string{"X-Request-Id": sane})
	if got := resp.Header.Get("X-Request-Id"); got != sane {
		t.Errorf("sane id answered as %q", got)
	}
	md, _ = e.workspaces.received()
	if got := md.Get("x-request-id"); !slices.Equal(got, []string{sane}) {
		t.Errorf("forwarded %q, want %q", got, sane)
	}

	for _, insane := range []string{"has space", "semi;colon", strings.Repeat("a", 129), "ünïcode"} {
		resp, _ = e.do(t, http.MethodGet, "/api/workspace/w1", nil, map[string]string{"X-Request-Id": insane})
		if got := resp.Header.Get("X-Request-Id"); !hexID.MatchString(got) {
			t.Errorf("insane id %q answered as %q", insane, got)
		}
	}
	// Clients cannot smuggle metadata, the request id included.
	_, _ = e.do(t, http.MethodGet, "/api/workspace/w1", nil, map[string]string{
		"X-Request-Id": sane, "Grpc-Metadata-X-Request-Id": "spoof", "Grpc-Metadata-X-Caller": "spoof",
	})
	md, _ = e.workspaces.received()
	if got := md.Get("x-request-id"); !slices.Equal(got, []string{sane}) || len(md.Get("x-caller")) != 0 {
		t.Errorf("metadata %v", md)
	}

	// Errors carry it too, including routing errors.
	resp, body := e.do(t, http.MethodGet, "/nope", nil, map[string]string{"X-Request-Id": sane})
	if p := checkError(t, resp, body, 404, "NOT_FOUND"); p.GetRequestId() != sane {
		t.Errorf("requestId %q", p.GetRequestId())
	}
}

func TestAuthorizationAndIfMatchForwarded(t *testing.T) {
	e := newEnv(t, options{})
	e.workspaces.workspace = sampleWorkspace()
	const credentials = "Basic YXBwLWtleTp0b3Atc2VjcmV0" // app-key:top-secret
	resp, _ := e.do(t, http.MethodPut, "/api/workspace/w1", strings.NewReader(`{"name":"x"}`),
		map[string]string{"Authorization": credentials, "If-Match": `"1"`})
	if resp.StatusCode != 200 {
		t.Fatalf("status %d", resp.StatusCode)
	}
	md, _ := e.workspaces.received()
	if got := md.Get("authorization"); !slices.Equal(got, []string{credentials}) {
		t.Errorf("authorization %q", got)
	}
	if got := md.Get("if-match"); !slices.Equal(got, []string{`"1"`}) {
		t.Errorf("if-match %q", got)
	}
	logs := e.logs.String()
	if !strings.Contains(logs, "msg=request") || !strings.Contains(logs, "status=200") {
		t.Errorf("no access log line: %s", logs)
	}
	if strings.Contains(logs, "YXBwLWtleTp0b3Atc2VjcmV0") || strings.Contains(logs, "top-secret") {
		t.Errorf("credentials logged: %s", logs)
	}
}

func TestUpdateMaskFromBodyKeys(t *testing.T) {
	e := newEnv(t, options{})
	e.workspaces.workspace = sampleWorkspace()
	tests := []struct {
		body string
		want []string
	}{
		{`{"name":"n","parentWorkspaceId":null,"objectiveDocuments":[],"id":"w1"}`,
			[]string{"name", "parent_workspace_id", "objective_documents"}},
		{`{"address":{"city":"Springfield"},"products":[{"bank":{"id":"p/b"}}],"type":"CAMPUS"}`,
			[]string{"address", "products", "type"}},
		{`{"parentWorkspaceId":"w0"}`, []string{"parent_workspace_id"}},
		{`{"id":"w1"}`, []string{}},
		{`{}`, []string{}},
		{``, []string{}},
	}
	for _, tt := range tests {
		resp, body := e.do(t, http.MethodPut, "/api/workspace/w1", strings.NewReader(tt.body), nil)
		if resp.StatusCode != 200 {
			t.Fatalf("%s: status %d %s", tt.body, resp.StatusCode, body)
		}
		_, req := e.workspaces.received()
		if got := req.GetUpdateMask().GetPaths(); !slices.Equal(got, tt.want) || req.GetUpdateMask() == nil {
			t.Errorf("%s: mask %q, want %q", tt.body, got, tt.want)
		}
		if req.GetId() != "w1" || req.GetEtag() != "" {
			t.Errorf("id %q, etag %q", req.GetId(), req.GetEtag())
		}
	}
	resp, _ := e.do(t, http.MethodPut, "/api/workspace/w1", strings.NewReader(`{"parentWorkspaceId":null}`), nil)
	_, req := e.workspaces.received()
	if resp.StatusCode != 200 || req.ParentWorkspaceId != nil || !slices.Equal(req.GetUpdateMask().GetPaths(), []string{"parent_workspace_id"}) {
		t.Errorf("null parent: %v", req)
	}
}

// A list is cleared by an empty one (the workspace service's
// domain.Changes): over REST the body sends [], which the service receives
// as the mask naming the list with none of it, the request gRPC callers
// send to clear it; null is refused, since it is not a list.
func TestUpdateClearsAListWithAnEmptyOneAndRefusesNull(t *testing.T) {
	e := newEnv(t, options{})
	e.workspaces.workspace = sampleWorkspace()
	resp, body := e.do(t, http.MethodPut, "/api/workspace/w1", strings.NewReader(`{"products":[]}`), nil)
	if resp.StatusCode != 200 {
		t.Fatalf("status %d %s", resp.StatusCode, body)
	}
	if _, req := e.workspaces.received(); !slices.Equal(req.GetUpdateMask().GetPaths(), []string{"products"}) || len(req.GetProducts()) != 0 {
		t.Errorf("[]: mask %q, products %v; want the mask naming products, and none", req.GetUpdateMask().GetPaths(), req.GetProducts())
	}
	resp, body = e.do(t, http.MethodPut, "/api/workspace/w1", strings.NewReader(`{"products":null}`), nil)
	p := checkError(t, resp, body, 400, "INVALID_ARGUMENT")
	if len(p.Details) != 1 || p.Details[0].Field != "products" || !strings.Contains(p.Details[0].Description, "must not be null") {
		t.Errorf("null: details %+v", p.Details)
	}
}

func TestBodyDecodingErrors(t *testing.T) {
	e := newEnv(t, options{})
	tests := []struct {
		name, body, field, description string
	}{
		{"unknown field", `{"name":"n","foo":1}`, "foo", "unknown field"},
		{"unknown nested field", `{"address":{"planet":"x"}}`, "address.planet", "unknown field"},
		{"unknown field in a list", `{"products":[{"bank":{"id":"p/b"}},{"bank":{"x":1}}]}`, "products[1].bank.x", "unknown field"},
		{"proto name", `{"parent_workspace_id":"w0"}`, "parent_workspace_id", "unknown field"},
		{"hidden etag", `{"etag":"\"1\""}`, "etag", "unknown field"},
		{"hidden update mask", `{"updateMask":"name"}`, "updateMask", "unknown field"},
		{"read-only field", `{"createdAt":"2026-11-22T07:46:00.000Z"}`, "createdAt", "unknown field"},
		{"given twice", `{"name":"a","name":"b"}`, "name", "given more than once"},
		{"wrong type", `{"name":5}`, "name", "expected a string, got 5"},
		{"nested wrong type", `{"address":{"city":true}}`, "address.city", "expected a string, got true"},
		{"wrapper wrong type", `{"parentWorkspaceId":{}}`, "parentWorkspaceId", "expected a string, got an object"},
		{"element wrong type", `{"objectiveDocuments":["a",2]}`, "objectiveDocuments[1]", "expected a string, got 2"},
		{"object expected", `{"address":"x"}`, "address", `expected an object, got "x"`},
		{"array expected", `{"products":{}}`, "products", "expected an array, got an object"},
		{"id changed", `{"id":"other"}`, "id", "the identifier cannot be modified"},
		{"malformed", `{"name":`, "", ""},
		{"trailing data", `{"name":"n"} {}`, "", ""},
		{"not an object", `[1]`, "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp, body := e.do(t, http.MethodPut, "/api/workspace/w1", strings.NewReader(tt.body), nil)
			p := checkError(t, resp, body, 400, "INVALID_ARGUMENT")
			if tt.field == "" {
				if len(p.Details) != 0 {
					t.Errorf("details %+v", p.Details)
				}
				return
			}
			if len(p.Details) != 1 || p.Details[0].Field != tt.field || p.Details[0].Description != tt.description {
				t.Errorf("details %+v, body %s", p.Details, body)
			}
		})
	}
	if _, req := e.workspaces.received(); req != nil {
		t.Errorf("a bad body reached the service: %v", req)
	}
	// The same on another route.
	resp, body := e.do(t, http.MethodPost, "/api/login/sdk", strings.NewReader(`{"email":"a@b.c","bogus":true}`), nil)
	if p := checkError(t, resp, body, 400, "INVALID_ARGUMENT"); len(p.Details) != 1 || p.Details[0].Field != "bogus" {
		t.Errorf("details %+v", p.Details)
	}
	resp, body = e.do(t, http.MethodPost, "/api/workspaces", strings.NewReader(`{"filter":{"address.state":{"include":["US-CA"],"exclude":[]}}}`), nil)
	if p := checkError(t, resp, body, 400, "INVALID_ARGUMENT"); len(p.Details) != 1 || p.Details[0].Field != "filter.address.state.exclude" {
		t.Errorf("details %+v", p.Details)
	}
}

// unsized hides a reader's length, so the client sends it chunked.
type unsized struct{ io.Reader }

func TestBodyTooLarge(t *testing.T) {
	e := newEnv(t, options{})
	big := `{"name":"` + strings.Repeat("a", 2<<20) + `"}`

	resp, body := e.do(t, http.MethodPut, "/api/workspace/w1", strings.NewReader(big), nil)
	checkError(t, resp, body, 413, "RESOURCE_EXHAUSTED")

	req, err := http.NewRequest(http.MethodPut, e.url+"/api/workspace/w1", unsized{strings.NewReader(big)})
	if err != nil {
		t.Fatal(err)
	}
	if req.ContentLength != 0 {
		t.Fatalf("content length %d: the request would not be chunked", req.ContentLength)
	}
	resp, err = http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ = io.ReadAll(resp.Body)
	resp.Body.Close()
	checkError(t, resp, body, 413, "RESOURCE_EXHAUSTED")
	if _, req := e.workspaces.received(); req != nil {
		t.Errorf("an oversized body reached the service")
	}

	// Exactly at the limit is fine as far as size goes.
	small := newEnv(t, options{maxBodyBytes: 16})
	small.workspaces.workspace = sampleWorkspace()
	resp, body = small.do(t, http.MethodPut, "/api/workspace/w1", strings.NewReader(`{"name":"abcde"}`), nil)
	if resp.StatusCode != 200 {
		t.Errorf("16-byte body: %d %s", resp.StatusCode, body)
	}
}

func TestBackendDownAndDeadline(t *testing.T) {
	e := newEnv(t, options{workspaceDown: true})
	resp, body := e.do(t, http.MethodGet, "/api/workspace/w1", nil, nil)
	p := checkError(t, resp, body, 503, "UNAVAILABLE")
	if resp.Header.Get("Retry-After") != "1" {
		t.Errorf("Retry-After %q", resp.Header.Get("Retry-After"))
	}
	if strings.Contains(p.Message, "127.0.0.1") {
		t.Errorf("message leaks the address: %q", p.Message)
	}

	// The backend never answers: only the gateway's own deadline can end
	// the call, so an answer at all shows the request did not hang.
	slow := newEnv(t, options{timeout: 200 * time.Millisecond})
	slow.workspaces.hang = true
	resp, body = slow.do(t, http.MethodGet, "/api/workspace/w1", nil, nil)
	checkError(t, resp, body, 504, "DEADLINE_EXCEEDED")
}

func TestResponses(t *testing.T) {
	e := newEnv(t, options{})
	e.workspaces.workspace = sampleWorkspace()
	e.workspaces.header = metadata.Pairs("etag", `"1"`, "x-internal", "secret")

	resp, body := e.do(t, http.MethodGet, "/api/workspace/w1", nil, map[string]string{"TE": "trailers"})
	if resp.StatusCode != 200 {
		t.Fatalf("status %d %s", resp.StatusCode, body)
	}
	if got := resp.Header.Get("ETag"); got != `"1"` {
		t.Errorf("ETag %q", got)
	}
	for k := range resp.Header {
		if strings.HasPrefix(strings.ToLower(k), "grpc-") {
			t.Errorf("leaked header %s", k)
		}
	}
	for k := range resp.Trailer {
		t.Errorf("leaked trailer %s", k)
	}
	var got map[string]json.RawMessage
	if err := json.Unmarshal(body, &got); err != nil {
		t.Fatal(err)
	}
	if string(got["parentWorkspaceId"]) != "null" {
		t.Errorf("parentWorkspaceId = %s", got["parentWorkspaceId"])
	}
	if _, ok := got["deletedAt"]; ok {
		t.Errorf("deletedAt present while unset: %s", body)
	}
	for _, k := range []string{"__typename", "workspaceId", "objectiveDocuments", "createdAt", "updatedAt", "products", "tags"} {
		if _, ok := got[k]; !ok {
			t.Errorf("%s missing: %s", k, body)
		}
	}

	deleted := sampleWorkspace()
	deleted.ParentWorkspaceId = wrapperspb.String("w0")
	deleted.DeleteTime = proto.String("2026-11-23T00:00:00.000Z")
	e.workspaces.workspace = deleted
	_, body = e.do(t, http.MethodGet, "/api/workspace/w1", nil, nil)
	got = nil
	_ = json.Unmarshal(body, &got)
	if string(got["parentWorkspaceId"]) != `"w0"` || string(got["deletedAt"]) != `"2026-11-23T00:00:00.000Z"` {
		t.Errorf("deleted workspace: %s", body)
	}

	// Errors forward the etag too (a 412 tells the current one) and nothing else.
	e.workspaces.err = grpcfault.Status(fault.New(fault.PreconditionFailed, "stale"))
	resp, body = e.do(t, http.MethodGet, "/api/workspace/w1", nil, nil)
	checkError(t, resp, body, 412, "FAILED_PRECONDITION")
	if resp.Header.Get("ETag") != `"1"` || resp.Header.Get("Grpc-Metadata-X-Internal") != "" {
		t.Errorf("error headers %v", resp.Header)
	}
}

func TestKeysRouteIsArray(t *testing.T) {
	e := newEnv(t, options{})
	resp, body := e.do(t, http.MethodGet, "/api/workspace/w1/keys", nil, nil)
	if resp.StatusCode != 200 || strings.TrimSpace(string(body)) != "[]" {
		t.Errorf("empty keys: %d %s", resp.StatusCode, body)
	}
	e.workspaces.keys = []*workspacev1.KeyPair{{AppKey: "k", AppSecret: "s", Tags: []*workspacev1.Tag{{Key: "allow-rest-api-access", Type: "string", Value: "TRUE"}}}}
	_, body = e.do(t, http.MethodGet, "/api/workspace/w1/keys", nil, nil)
	var keys []map[string]any
	if err := json.Unmarshal(body, &keys); err != nil || len(keys) != 1 || keys[0]["appKey"] != "k" {
		t.Errorf("keys %s: %v", body, err)
	}
}

func TestLoginRoute(t *testing.T) {
	e := newEnv(t, options{})
	resp, body := e.do(t, http.MethodPost, "/api/login/sdk", strings.NewReader(`{"email":"a@b.c","workspaceId":"w1"}`), nil)
	if resp.StatusCode != 200 || !strings.Contains(string(body), `"expiresAt":"2026-11-22T15:46:00Z"`) {
		t.Errorf("login: %d %s", resp.StatusCode, body)
	}
	e.auth.mu.Lock()
	defer e.auth.mu.Unlock()
	if e.auth.req.GetWorkspaceId() != "w1" || e.auth.req.GetEmail() != "a@b.c" {
		t.Errorf("request %v", e.auth.req)
	}
}

func TestHealth(t *testing.T) {
	up := newEnv(t, options{})
	resp, body := up.do(t, http.MethodGet, "/healthz", nil, nil)
	if resp.StatusCode != 200 || strings.TrimSpace(string(body)) != `{"status":"ok"}` || resp.Header.Get("X-Request-Id") == "" {
		t.Errorf("healthz: %d %s", resp.StatusCode, body)
	}
	resp, body = up.do(t, http.MethodGet, "/readyz", nil, nil)
	if resp.StatusCode != 200 || strings.TrimSpace(string(body)) != `{"status":"ok"}` {
		t.Errorf("readyz: %d %s", resp.StatusCode, body)
	}

	down := newEnv(t, options{authDown: true})
	resp, body = down.do(t, http.MethodGet, "/healthz", nil, nil)
	if resp.StatusCode != 200 {
		t.Errorf("healthz with a backend down: %d", resp.StatusCode)
	}
	resp, body = down.do(t, http.MethodGet, "/readyz", nil, nil)
	p := checkError(t, resp, body, 503, "UNAVAILABLE")
	if !strings.Contains(p.Message, "auth service") || strings.Contains(p.Message, "workspace service") {
		t.Errorf("message %q", p.Message)
	}
}

// Metrics are labelled by route pattern and standard method, whatever the
// callers send, and are not served on the REST port.
func TestMetricsCountRequestsByRoute(t *testing.T) {
	e := newEnv(t, options{})
	e.do(t, http.MethodGet, "/api/workspace/w1", nil, nil)
	e.do(t, http.MethodGet, "/api/workspace/w2", nil, nil)
	e.do(t, http.MethodGet, "/no/such/route", nil, nil)
	for i := range 20 {
		e.do(t, "INVENTED"+strconv.Itoa(i), "/api/workspace/w"+strconv.Itoa(i), nil, nil)
	}
	resp, body := e.do(t, http.MethodGet, "/metrics", nil, nil)
	checkError(t, resp, body, http.StatusNotFound, "NOT_FOUND")

	metrics := httptest.NewServer(e.server.Metrics().Handler())
	defer metrics.Close()
	resp, body = get(t, metrics.URL+"/metrics")
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("/metrics: %d", resp.StatusCode)
	}
	for _, want := range []string{
		`http_request_duration_seconds_count{code="200",method="GET",route="/api/workspace/{id=*}"} 2`,
		`http_request_duration_seconds_count{code="404",method="GET",route="unmatched"} 2`,
		`http_request_duration_seconds_count{code="405",method="other",route="unmatched"} 20`,
		`grpc_client_handling_seconds_count{grpc_code="OK",grpc_method="/workspace.v1.WorkspaceService/GetWorkspace"} 2`,
	} {
		if !strings.Contains(string(body), want) {
			t.Errorf("/metrics lacks %s", want)
		}
	}
	if strings.Contains(string(body), "/api/workspace/w1") || strings.Contains(string(body), "INVENTED") {
		t.Error("/metrics is labelled with what callers sent")
	}
}

func get(t *testing.T, url string) (*http.Response, []byte) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp, body
}

// After Drain, /readyz says 503 so the load balancer stops sending new
// requests, while the routes keep answering until Shutdown.
func TestDrainFailsReadinessButKeepsServing(t *testing.T) {
	e := newEnv(t, options{})
	if resp, body := e.do(t, http.MethodGet, "/readyz", nil, nil); resp.StatusCode != http.StatusOK {
		t.Fatalf("readyz before drain: %d %s", resp.StatusCode, body)
	}
	e.server.Drain()
	resp, body := e.do(t, http.MethodGet, "/readyz", nil, nil)
	checkError(t, resp, body, http.StatusServiceUnavailable, "UNAVAILABLE")
	if resp, body := e.do(t, http.MethodGet, "/api/workspace/w1", nil, nil); resp.StatusCode != http.StatusOK {
		t.Fatalf("a route while draining: %d %s", resp.StatusCode, body)
	}
	if resp, _ := e.do(t, http.MethodGet, "/healthz", nil, nil); resp.StatusCode != http.StatusOK {
		t.Fatalf("healthz while draining: %d", resp.StatusCode)
	}
}
