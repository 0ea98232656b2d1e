package server_test

import (
	"bufio"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"
)

// Bytes that are not UTF-8, wherever the gateway reads them, are 400 naming
// where they were, and the service is never asked.
func TestInvalidUTF8IsRefusedNamingTheField(t *testing.T) {
	e := newEnv(t, options{})
	e.workspaces.workspace = sampleWorkspace()
	tests := []struct {
		name, method, path string
		header             map[string]string
		field              string
	}{
		{"path variable", http.MethodGet, "/api/workspace/%ff", nil, "id"},
		{"overlong slash", http.MethodGet, "/api/workspace/%c0%af", nil, "id"},
		{"path variable before a literal", http.MethodGet, "/api/workspace/a%80b/keys", nil, "id"},
		{"path variable before a verb", http.MethodPost, "/api/workspace/%fe:undelete", nil, "id"},
		{"a path variable named by its JSON name", http.MethodDelete, "/api/workspace/w1/keys/%ff", nil, "appKey"},
		{"query value", http.MethodGet, "/api/workspaces?filter.search=%ff", nil, "filter.search"},
		{"repeated query value", http.MethodGet, "/api/workspaces?filter.address.state.include=US-CA&filter.address.state.include=%ff", nil, "filter.address.state.include"},
		{"If-Match", http.MethodDelete, "/api/workspace/w1", map[string]string{"If-Match": "\"\xff\""}, "If-Match"},
		{"If-Match not ASCII", http.MethodDelete, "/api/workspace/w1", map[string]string{"If-Match": "\"é\""}, "If-Match"},
		{"X-Request-Id", http.MethodGet, "/api/workspace/w1", map[string]string{"X-Request-Id": "a\xffb"}, "X-Request-Id"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp, body := e.do(t, tt.method, tt.path, nil, tt.header)
			p := checkError(t, resp, body, http.StatusBadRequest, "INVALID_ARGUMENT")
			if len(p.GetDetails()) != 1 || p.GetDetails()[0].GetField() != tt.field {
				t.Errorf("details %v, want one naming %s", p.GetDetails(), tt.field)
			}
			if strings.ContainsRune(string(body), 0xff) || strings.Contains(string(body), `\xff`) {
				t.Errorf("the answer quotes the bytes: %s", body)
			}
			if got, list := e.workspaces.got(), e.workspaces.listed(); got != nil || list != nil {
				t.Errorf("the service was asked: %v %v", got, list)
			}
		})
	}
}

// An X-Request-Id that is text but not a sane id is replaced, as before.
func TestOddRequestIDIsReplaced(t *testing.T) {
	e := newEnv(t, options{})
	e.workspaces.workspace = sampleWorkspace()
	resp, _ := e.do(t, http.MethodGet, "/api/workspace/w1", nil, map[string]string{"X-Request-Id": "a b é"})
	if resp.StatusCode != http.StatusOK || !hexID.MatchString(resp.Header.Get("X-Request-Id")) {
		t.Errorf("status %d, X-Request-Id %q", resp.StatusCode, resp.Header.Get("X-Request-Id"))
	}
}

// An encoded slash or colon stays in its path variable.
func TestEncodedSeparatorsStayInTheVariable(t *testing.T) {
	e := newEnv(t, options{})
	e.workspaces.workspace = sampleWorkspace()
	for path, id := range map[string]string{
		"/api/workspace/x%2Fkeys":      "x/keys",
		"/api/workspace/x%2fkeys":      "x/keys",
		"/api/workspace/x%3Aundelete":  "x:undelete",
		"/api/workspace/a%20b":         "a b",
		"/api/workspace/%25":           "%",
		"/api/workspace/caf%C3%A9":     "café",
		"/api/workspace/x%2F..%2Fkeys": "x/../keys",
	} {
		resp, body := e.do(t, http.MethodGet, path, nil, nil)
		got := e.workspaces.got()
		if resp.StatusCode != http.StatusOK || got.GetId() != id {
			t.Errorf("GET %s: %d %s, asked for %q, want %q", path, resp.StatusCode, body, got.GetId(), id)
		}
	}
}

// Client-sent grpc-* headers reach neither grpc-gateway's deadline nor the
// services' metadata.
func TestGRPCHeadersAreDropped(t *testing.T) {
	e := newEnv(t, options{timeout: 5 * time.Second})
	e.workspaces.workspace = sampleWorkspace()
	resp, body := e.do(t, http.MethodGet, "/api/workspace/w1", nil, map[string]string{
		"Grpc-Timeout":           "1n",
		"Grpc-Metadata-X-Tenant": "other",
		"grpc-metadata-if-match": `"9"`,
		"Grpc-Status":            "13",
	})
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("status %d: %s", resp.StatusCode, body)
	}
	md, _ := e.workspaces.received()
	for k := range md {
		if k == "x-tenant" || k == "if-match" || k == "grpc-status" {
			t.Errorf("metadata %s reached the service: %v", k, md)
		}
	}
	// A malformed Grpc-Timeout, which grpc-gateway would refuse quoting
	// it, is dropped too.
	resp, body = e.do(t, http.MethodGet, "/api/workspace/w1", nil, map[string]string{"Grpc-Timeout": strings.Repeat("9", 500)})
	if resp.StatusCode != http.StatusOK {
		t.Errorf("status %d: %s", resp.StatusCode, body)
	}
}

// A body that stops arriving is answered 408 in the error shape once the
// request deadline passes, saying nothing of the connection.
func TestStalledBodyIsRequestTimeout(t *testing.T) {
	e := newEnv(t, options{timeout: 300 * time.Millisecond})
	e.workspaces.workspace = sampleWorkspace()
	for _, path := range []string{"/api/workspace/w1", "/api/workspaces"} {
		method := http.MethodPut
		if path == "/api/workspaces" {
			method = http.MethodPost
		}
		conn, err := net.Dial("tcp", strings.TrimPrefix(e.url, "http://"))
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		// Generous: only a hang fails this.
		_ = conn.SetDeadline(time.Now().Add(30 * time.Second))
		_, err = io.WriteString(conn, method+" "+path+" HTTP/1.1\r\nHost: gateway\r\nContent-Type: application/json\r\n"+
			"Content-Length: 100\r\n\r\n{\"")
		if err != nil {
			t.Fatal(err)
		}
		resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
		if err != nil {
			t.Fatalf("%s %s: no answer: %v", method, path, err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		p := checkError(t, resp, body, http.StatusRequestTimeout, "DEADLINE_EXCEEDED")
		if strings.Contains(p.GetMessage(), "timeout") || strings.Contains(p.GetMessage(), "127.0.0.1") {
			t.Errorf("message %q", p.GetMessage())
		}
		if got, list := e.workspaces.got(), e.workspaces.listed(); got != nil || list != nil {
			t.Errorf("the service was asked: %v %v", got, list)
		}
	}
	// A body that arrives in time is not affected, on the same server.
	resp, body := e.do(t, http.MethodPut, "/api/workspace/w1", strings.NewReader(`{"name":"n"}`), map[string]string{"Content-Type": "application/json"})
	if resp.StatusCode != http.StatusOK {
		t.Errorf("status %d: %s", resp.StatusCode, body)
	}
}

// A huge unknown name is quoted once, cut short: the answer stays small.
func TestUnknownNamesAreQuotedOnceAndBounded(t *testing.T) {
	e := newEnv(t, options{})
	long := strings.Repeat("q", 500_000)
	for _, tt := range []struct{ method, path, body string }{
		{http.MethodPost, "/api/workspaces", `{"` + long + `":1}`},
		{http.MethodPost, "/api/workspaces", `{"filter":{"` + long + `":1}}`},
		{http.MethodGet, "/api/workspaces?" + long[:50_000] + "=1", ""},
		{http.MethodGet, "/api/" + long[:50_000], ""},
	} {
		resp, body := e.do(t, tt.method, tt.path, strings.NewReader(tt.body), map[string]string{"Content-Type": "application/json"})
		if resp.StatusCode/100 != 4 || len(body) > 1024 || strings.Count(string(body), strings.Repeat("q", 40)) != 1 {
			t.Errorf("%s %.40s…: %d, %d bytes: %.300s", tt.method, tt.path, resp.StatusCode, len(body), body)
		}
	}
}

// A body that cannot be read (a malformed chunk) is 400 in our words, not
// the Go error's.
func TestUnreadableBodyIsRefusedPlainly(t *testing.T) {
	e := newEnv(t, options{})
	conn, err := net.Dial("tcp", strings.TrimPrefix(e.url, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(30 * time.Second))
	_, err = io.WriteString(conn, "POST /api/workspaces HTTP/1.1\r\nHost: gateway\r\nContent-Type: application/json\r\n"+
		"Transfer-Encoding: chunked\r\n\r\n2\r\n{}\r\nzz\r\n")
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	p := checkError(t, resp, body, http.StatusBadRequest, "INVALID_ARGUMENT")
	if p.GetMessage() != "the request is malformed" {
		t.Errorf("message %q", p.GetMessage())
	}
	if !strings.Contains(e.logs.String(), "chunk") {
		t.Errorf("the cause is not logged: %s", e.logs.String())
	}
}
