package server_test

import (
	"context"
	"encoding/json"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/liveproctor/workspaces/gateway/internal/config"
	"github.com/liveproctor/workspaces/gateway/internal/server"
	workspacev1 "github.com/liveproctor/workspaces/pkg/gen/workspace/v1"
)

// maxMessage bounds an error message (and a detail), whatever the caller's
// input: the gateway quotes at most a short prefix of it.
const maxMessage = 1024

// newGateway returns the gateway's handler in front of a backend that
// reads every call and answers NOT_FOUND: whatever the gateway admits
// reaches it (after the gRPC client encodes it) and is answered 404, so
// every other answer is the gateway's own.
func newGateway(f *testing.F) http.Handler {
	h, _ := newGatewayRecording(f)
	return h
}

// received is the last call the backend read: its method and its
// request's field 1, the id of every call that names a workspace.
type received struct {
	mu     sync.Mutex
	method string
	id     string
}

func (r *received) get() (method, id string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.method, r.id
}

// newGatewayRecording is newGateway, with what the backend last received.
func newGatewayRecording(f *testing.F) (http.Handler, *received) {
	last := &received{}
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		f.Fatal(err)
	}
	backend := grpc.NewServer(grpc.UnknownServiceHandler(func(_ any, stream grpc.ServerStream) error {
		var req workspacev1.GetWorkspaceRequest // field 1 only; the rest is kept unknown
		if err := stream.RecvMsg(&req); err != nil {
			return err
		}
		method, _ := grpc.MethodFromServerStream(stream)
		last.mu.Lock()
		last.method, last.id = method, req.GetId()
		last.mu.Unlock()
		return status.Error(codes.NotFound, passedOn)
	}))
	go func() { _ = backend.Serve(lis) }()
	f.Cleanup(backend.Stop)
	addr := lis.Addr().String()
	srv, err := server.New(config.Config{
		WorkspaceServiceAddr: addr, AuthServiceAddr: addr,
		RequestTimeout: 5 * time.Second, MaxBodyBytes: config.DefaultMaxBodyBytes, ShutdownTimeout: time.Second,
	}, slog.New(slog.DiscardHandler))
	if err != nil {
		f.Fatal(err)
	}
	f.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		_ = srv.Shutdown(ctx)
	})
	return srv.Handler(), last
}

// answer is an error answer as the contract shapes it.
type answer struct {
	Error struct {
		Code    int    `json:"code"`
		Status  string `json:"status"`
		Message string `json:"message"`
		Details []struct {
			Field       string `json:"field"`
			Description string `json:"description"`
		} `json:"details"`
	} `json:"error"`
}

// passedOn is the backend's answer to every call.
const passedOn = "passed on"

// checkAnswer fails unless rec is a 400 INVALID_ARGUMENT in the contract's
// shape, or (the request admitted) the backend's 404; never a 500. The message and details are UTF-8 text no longer than the
// caller's input allows.
func checkAnswer(t *testing.T, what string, inputLen int, rec *httptest.ResponseRecorder) {
	t.Helper()
	body := rec.Body.Bytes()
	var a answer
	if err := json.Unmarshal(body, &a); err != nil {
		t.Fatalf("%s: %d answer is not the error shape: %.300s", what, rec.Code, body)
	}
	switch {
	case rec.Code == http.StatusBadRequest && a.Error.Status == "INVALID_ARGUMENT":
	case rec.Code == http.StatusNotFound && a.Error.Message == passedOn:
		return
	default:
		t.Fatalf("%s: answered %d %s: %.300s", what, rec.Code, a.Error.Status, body)
	}
	if a.Error.Code != http.StatusBadRequest || !utf8.ValidString(a.Error.Message) {
		t.Fatalf("%s: %.300s", what, body)
	}
	if n := len(a.Error.Message); n > maxMessage {
		t.Fatalf("%s: a %d-byte message for %d bytes of input: %.300s", what, n, inputLen, a.Error.Message)
	}
	for _, d := range a.Error.Details {
		if len(d.Field)+len(d.Description) > maxMessage || !utf8.ValidString(d.Field+d.Description) {
			t.Fatalf("%s: the detail %.300q: %.300q", what, d.Field, d.Description)
		}
	}
}

// Every body on every route that takes one is answered 400 in the
// contract's shape or passed on to the service.
func FuzzBodyAnswers(f *testing.F) {
	routes := []struct{ method, path string }{
		{http.MethodPut, "/api/workspace/w1"},
		{http.MethodPost, "/api/workspace"},
		{http.MethodPost, "/api/workspaces"},
		{http.MethodPost, "/api/login/sdk"},
		{http.MethodPost, "/api/logout/sdk"},
	}
	for _, seed := range []string{
		`{"name":"n"}`, `{"id":"w2"}`, `{"email":"ada@example.com","workspaceId":"w"}`, `{"pageSize":"x"}`, `{"pageSize":1.5}`,
		`{"pageSize":99999999999}`, `{"filter":{"address.state":{"exclude":[]}}}`, `{"foo":1}`, `{"name":"\ud800"}`,
		"{\"name\":\"\xff\"}", `{"name":`, `[1]`, `{"products":[{"bank":{"x":1}}]}`, `{"parentWorkspaceId":{}}`, `{"type":7}`,
		`{"address":"` + strings.Repeat("a", 100) + `"}`, `{"a":` + strings.Repeat("[", 200) + `}`,
	} {
		for i := range routes {
			f.Add(seed, uint8(i))
		}
	}
	handler := newGateway(f)
	f.Fuzz(func(t *testing.T, body string, route uint8) {
		r := routes[int(route)%len(routes)]
		if strings.TrimSpace(body) == "" {
			return // an empty body is no body
		}
		req := httptest.NewRequest(r.method, r.path, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		rec := httptest.NewRecorder()
		handler.ServeHTTP(rec, req)
		checkAnswer(t, r.method+" "+r.path+" "+body, len(body), rec)
	})
}

// Every query string on the GET list is answered 400 in the contract's
// shape or passed on to the service.
func FuzzQueryAnswers(f *testing.F) {
	for _, seed := range []string{
		"", "filter.search=spring", "filter.address.state.include=US-CA&filter.address.state.include=US-NY", "pageSize=x",
		"colour=red", "pageSize=1&pageSize=2", "pageSize=99999999999", "filter=x", "filter.search.x=1", "%zz", "a=%",
		"a;b=c", "pageToken=" + strings.Repeat("x", 300), strings.Repeat("k", 300) + "=1",
	} {
		f.Add(seed)
	}
	handler := newGateway(f)
	f.Fuzz(func(t *testing.T, query string) {
		values, err := url.ParseQuery(query)
		if err != nil {
			return // a client library sends no malformed escape
		}
		req := httptest.NewRequest(http.MethodGet, "/api/workspaces?"+values.Encode(), nil)
		rec := httptest.NewRecorder()
		handler.ServeHTTP(rec, req)
		checkAnswer(t, "GET ?"+query, len(query), rec)
	})
}

// A workspace id in a path, escaped as a client library escapes a path
// segment, reaches the route's method unchanged, or the gateway answers
// it itself in the contract's shape (400, or 404/405 when no route takes
// it); never a 500.
func FuzzPathAnswers(f *testing.F) {
	routes := []struct{ method, prefix, suffix, rpc string }{
		{http.MethodGet, "/api/workspace/", "", "GetWorkspace"},
		{http.MethodGet, "/api/workspace/", "/keys", "ListWorkspaceKeys"},
		{http.MethodDelete, "/api/workspace/", "", "DeleteWorkspace"},
		{http.MethodPost, "/api/workspace/", ":undelete", "UndeleteWorkspace"},
		{http.MethodGet, "/lti/v1/workspaces/", "/config.xml", "GetLtiConfiguration"},
	}
	for _, seed := range []string{
		"w1", "springfield-district", "a:b", "a:undelete", "keys", ".", "..", "%", "%2F", "a b", "é", "a?b", "a#b", "",
		"a;b", "{id}", "*", strings.Repeat("x", 300),
	} {
		for i := range routes {
			f.Add(seed, uint8(i))
		}
	}
	handler, last := newGatewayRecording(f)
	f.Fuzz(func(t *testing.T, id string, route uint8) {
		r := routes[int(route)%len(routes)]
		path := r.prefix + url.PathEscape(id) + r.suffix
		req := httptest.NewRequest(r.method, path, nil)
		rec := httptest.NewRecorder()
		handler.ServeHTTP(rec, req)
		what := r.method + " " + path
		var a answer
		if err := json.Unmarshal(rec.Body.Bytes(), &a); err != nil {
			t.Fatalf("%s: %d answer is not the error shape: %.300s", what, rec.Code, rec.Body.Bytes())
		}
		switch {
		case rec.Code == http.StatusNotFound && a.Error.Message == passedOn:
			method, got := last.get()
			if !strings.HasSuffix(method, "/"+r.rpc) || got != id {
				t.Fatalf("%s reached %s with the id %q, want %s with %q", what, method, got, r.rpc, id)
			}
		case rec.Code == http.StatusBadRequest && a.Error.Status == "INVALID_ARGUMENT",
			rec.Code == http.StatusNotFound && a.Error.Status == "NOT_FOUND",
			rec.Code == http.StatusMethodNotAllowed && a.Error.Code == http.StatusMethodNotAllowed:
			if len(a.Error.Message) > maxMessage || !utf8.ValidString(a.Error.Message) {
				t.Fatalf("%s: the message %.300q", what, a.Error.Message)
			}
		default:
			t.Fatalf("%s: answered %d %s: %.300s", what, rec.Code, a.Error.Status, rec.Body.Bytes())
		}
	})
}
