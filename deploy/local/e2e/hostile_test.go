package e2e

import (
	"bufio"
	"encoding/base64"
	"fmt"
	"io"
	"net"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"
)

// The hostile-input suite: requests an attacker would send, each answered
// through the real gateway in the error shape the served document declares
// (the client checks every exchange against it), with the status a caller
// can act on, and never a network address, a Go error or a parser's words.

// leaks matches what no answer may carry: a host:port (IPv4 or IPv6), and
// the texts of Go's network and parsing errors.
var leaks = regexp.MustCompile(`\b\d{1,3}(\.\d{1,3}){3}:\d{1,5}\b|\[[0-9A-Fa-f:.]*:[0-9A-Fa-f:.]*\](:\d{1,5})?|` +
	`i/o timeout|read tcp|dial tcp|connection refused|invalid URL escape|proto:|\(line \d+:\d+\)|grpc:`)

// clean fails the test when an answer carries what leaks matches.
func clean(t *testing.T, what string, body []byte) {
	t.Helper()
	if m := leaks.Find(body); m != nil {
		t.Errorf("%s: the answer gives away %q: %.300s", what, m, body)
	}
}

// hostile sends a request through the e2e client (which checks it against
// the document) and checks the answer is clean and an error of status
// naming field ("" for none).
func hostile(c client, method, path string, body any, status int, grpcStatus, field string, headers ...string) *response {
	c.t.Helper()
	r := c.do(method, path, body, headers...)
	clean(c.t, r.what, r.body)
	r.wantError(status, grpcStatus, field)
	return r
}

func TestHostileInvalidUTF8(t *testing.T) {
	root := asRoot(t)
	w := root.create(unique(t, "w"), nil)
	tests := []struct {
		name, method, path string
		body               any
		headers            []string
		field              string
	}{
		{"path variable", "GET", "/api/workspace/%ff", nil, nil, "id"},
		{"overlong slash in a path variable", "GET", "/api/workspace/%c0%af", nil, nil, "id"},
		{"keys route", "GET", "/api/workspace/a%80b/keys", nil, nil, "id"},
		{"undelete", "POST", "/api/workspace/%fe:undelete", nil, nil, "id"},
		{"delete", "DELETE", "/api/workspace/%ff", nil, nil, "id"},
		{"update", "PUT", "/api/workspace/%ff", `{"name":"n"}`, nil, "id"},
		{"query value", "GET", "/api/workspaces?filter.search=%ff", nil, nil, "filter.search"},
		{"repeated query value", "GET", "/api/workspaces?filter.address.state.include=US-CA&filter.address.state.include=%c0%af", nil, nil, "filter.address.state.include"},
		{"JSON string value", "POST", "/api/workspaces", "{\"filter\":{\"search\":\"\xff\"}}", nil, "filter.search"},
		{"JSON name", "POST", "/api/workspaces", "{\"\xff\":1}", nil, "\uFFFD"},
		{"If-Match", "PUT", "/api/workspace/" + w.WorkspaceID, `{"name":"changed"}`, []string{"If-Match", "\"\xff\""}, "If-Match"},
		{"If-Match that is not ASCII", "DELETE", "/api/workspace/" + w.WorkspaceID, nil, []string{"If-Match", `"é"`}, "If-Match"},
		{"X-Request-Id", "GET", "/api/workspace/" + w.WorkspaceID, nil, []string{"X-Request-Id", "a\xffb"}, "X-Request-Id"},
		// The public routes answer the same, and declare it.
		{"X-Request-Id on the document", "GET", "/openapi.json", nil, []string{"X-Request-Id", "a\xffb"}, "X-Request-Id"},
		{"a query parameter on the document", "GET", "/openapi.json?anything=x", nil, nil, "anything"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			hostile(root.withT(t), tt.method, tt.path, tt.body, http.StatusBadRequest, "INVALID_ARGUMENT", tt.field, tt.headers...)
		})
	}
	t.Run("a path that names no route", func(t *testing.T) {
		hostile(root.withT(t), "GET", "/api/%ff/x", nil, http.StatusBadRequest, "INVALID_ARGUMENT", "")
	})
	// The refused If-Match changed nothing: it was not passed on empty.
	var got workspace
	root.get("/api/workspace/" + w.WorkspaceID).ok(&got)
	if got.Name != w.Name || got.DeletedAt != nil {
		t.Errorf("after refused requests the workspace is %+v", got)
	}
}

// rawExchange sends request as it is, bytes the Go client would escape or
// refuse included, and reads one answer; the answer is checked against the
// document as the request asDocumented (method and escaped path) would be.
func rawExchange(t *testing.T, request string, asDocumented *http.Request) (*http.Response, []byte) {
	t.Helper()
	conn, err := net.Dial("tcp", env.GatewayAddr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	// Generous: only a hang fails on this.
	if err := conn.SetDeadline(time.Now().Add(2 * time.Minute)); err != nil {
		t.Fatal(err)
	}
	if _, err := io.WriteString(conn, request); err != nil {
		t.Fatal(err)
	}
	resp, err := http.ReadResponse(bufio.NewReader(conn), asDocumented)
	if err != nil {
		t.Fatalf("%s: no answer: %v", asDocumented.URL.Path, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("read the answer: %v", err)
	}
	apiDoc.check(t, asDocumented, resp.StatusCode, resp.Header, body)
	clean(t, asDocumented.Method+" "+asDocumented.URL.Path, body)
	return resp, body
}

func basicHeader() string {
	return "Authorization: Basic " + base64.StdEncoding.EncodeToString([]byte(rootKey+":"+rootSecret)) + "\r\n"
}

func docRequest(t *testing.T, method, path, body string) *http.Request {
	t.Helper()
	var r io.Reader
	if body != "" {
		r = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, env.GatewayURL+path, r)
	if err != nil {
		t.Fatal(err)
	}
	req.SetBasicAuth(rootKey, rootSecret)
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	return req
}

// Bytes 0x80–0xff sent raw, not percent-encoded, in the path and the query.
func TestHostileRawBytes(t *testing.T) {
	for _, b := range []byte{0x80, 0xc0, 0xfe, 0xff} {
		for _, tt := range []struct{ raw, escaped, field string }{
			{"/api/workspace/x" + string([]byte{b}), "/api/workspace/x%" + fmt.Sprintf("%02X", b), "id"},
			{"/api/workspaces?filter.search=" + string([]byte{b}), "/api/workspaces?filter.search=%" + fmt.Sprintf("%02X", b), "filter.search"},
		} {
			resp, body := rawExchange(t, "GET "+tt.raw+" HTTP/1.1\r\nHost: gateway\r\n"+basicHeader()+"\r\n", docRequest(t, "GET", tt.escaped, ""))
			r := &response{t: t, what: fmt.Sprintf("GET %q", tt.raw), status: resp.StatusCode, header: resp.Header, body: body}
			r.wantError(http.StatusBadRequest, "INVALID_ARGUMENT", tt.field)
		}
	}
}

// A body that stops arriving is answered 408 in the error shape once the
// request deadline (REQUEST_TIMEOUT, 6s here) passes.
func TestHostileStalledBody(t *testing.T) {
	w := asRoot(t).create(unique(t, "w"), nil)
	for _, op := range []struct{ method, path string }{
		{"PUT", "/api/workspace/" + w.WorkspaceID},
		{"POST", "/api/workspaces"},
		{"POST", "/api/workspace"},
		{"POST", "/api/login/sdk"},
	} {
		t.Run(op.method+" "+op.path, func(t *testing.T) {
			t.Parallel() // each waits out the deadline
			resp, body := rawExchange(t, op.method+" "+op.path+" HTTP/1.1\r\nHost: gateway\r\n"+basicHeader()+
				"Content-Type: application/json\r\nContent-Length: 100\r\n\r\n{\"", docRequest(t, op.method, op.path, `{"name":"x"}`))
			if resp.StatusCode != http.StatusRequestTimeout || !strings.Contains(string(body), "DEADLINE_EXCEEDED") {
				t.Errorf("%s %s with a stalled body: %d %s", op.method, op.path, resp.StatusCode, body)
			}
		})
	}
}

// Caller input is quoted once and bounded: a huge unknown name or path
// gives a small answer.
func TestHostileEchoIsBounded(t *testing.T) {
	root := asRoot(t)
	long := strings.Repeat("q", 900_000)
	tests := []struct {
		name, method, path string
		body               any
		status             int
		grpcStatus         string
	}{
		{"unknown JSON field", "POST", "/api/workspaces", `{"` + long + `":1}`, 400, "INVALID_ARGUMENT"},
		{"unknown nested JSON field", "POST", "/api/workspace", `{"id":"x","address":{"` + long + `":1}}`, 400, "INVALID_ARGUMENT"},
		{"value of the wrong type", "POST", "/api/workspaces", `{"pageSize":"` + long + `"}`, 400, "INVALID_ARGUMENT"},
		{"unknown query parameter", "GET", "/api/workspaces?" + long[:100_000] + "=1", nil, 400, "INVALID_ARGUMENT"},
		{"query value of the wrong type", "GET", "/api/workspaces?pageSize=" + long[:100_000], nil, 400, "INVALID_ARGUMENT"},
		{"no route", "GET", "/api/" + long[:100_000], nil, 404, "NOT_FOUND"},
		{"no such method", "PATCH", "/api/workspace/" + long[:100_000], "{}", 405, "UNIMPLEMENTED"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := hostile(root.withT(t), tt.method, tt.path, tt.body, tt.status, tt.grpcStatus, "")
			if len(r.body) > 1024 {
				t.Errorf("a %d-byte answer: %.200s…", len(r.body), r.body)
			}
			if n := strings.Count(string(r.body), strings.Repeat("q", 40)); n > 1 {
				t.Errorf("the input is quoted %d times: %s", n, r.body)
			}
		})
	}
}

// Client-sent grpc-* headers never reach grpc-gateway or the services.
func TestHostileGRPCHeaders(t *testing.T) {
	root := asRoot(t)
	w := root.create(unique(t, "w"), nil)
	root.do("GET", "/api/workspace/"+w.WorkspaceID, nil, "Grpc-Timeout", "1n").ok(nil)
	root.do("GET", "/api/workspace/"+w.WorkspaceID, nil, "Grpc-Timeout", strings.Repeat("9", 300)).ok(nil)
	// Metadata of the client's choosing: neither credentials nor a
	// precondition.
	hostile(anonymous(t), "GET", "/api/workspace/"+w.WorkspaceID, nil, http.StatusUnauthorized, "UNAUTHENTICATED", "",
		"Grpc-Metadata-Authorization", "Basic "+base64.StdEncoding.EncodeToString([]byte(rootKey+":"+rootSecret)))
	root.do("PUT", "/api/workspace/"+w.WorkspaceID, map[string]any{"name": "renamed"}, "Grpc-Metadata-If-Match", `"999"`).ok(nil)
}

// An encoded slash belongs to the id it is in.
func TestHostileEncodedSlash(t *testing.T) {
	root := asRoot(t)
	for _, path := range []string{"/api/workspace/root%2Fkeys", "/api/workspace/root%2fkeys", "/api/workspace/x%2Fkeys"} {
		r := hostile(root, "GET", path, nil, http.StatusNotFound, "NOT_FOUND", "")
		if strings.Contains(string(r.body), rootSecret) || strings.Contains(string(r.body), "appSecret") {
			t.Errorf("GET %s answered key pairs: %s", path, r.body)
		}
	}
	// Where the id must be a workspace's, a slash is simply not one.
	hostile(root, "DELETE", "/api/workspace/root%2Fkeys", nil, http.StatusNotFound, "NOT_FOUND", "")
}

// Metrics are not on the REST port, and what callers send cannot grow them.
func TestHostileMetrics(t *testing.T) {
	hostile(anonymous(t), "GET", "/metrics", nil, http.StatusNotFound, "NOT_FOUND", "")
	for i := range 50 {
		r := anonymous(t).do(fmt.Sprintf("INVENTED%d", i), fmt.Sprintf("/api/workspace/w%d", i), nil)
		clean(t, r.what, r.body)
		r.wantError(http.StatusMethodNotAllowed, "UNIMPLEMENTED", "")
	}
	resp, err := http.Get("http://" + env.GatewayMetricsAddr + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK || !strings.Contains(string(body), `method="other"`) {
		t.Fatalf("gateway metrics: %d %.500s", resp.StatusCode, body)
	}
	if strings.Contains(string(body), "INVENTED") || strings.Contains(string(body), "/api/workspace/w1\"") {
		t.Error("the gateway's metrics are labelled with what callers sent")
	}
}
