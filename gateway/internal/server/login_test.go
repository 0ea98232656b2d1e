package server

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"maps"
	"net"
	"net/http"
	"net/http/httptest"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/metadata"

	"github.com/liveproctor/workspaces/gateway/internal/config"
	"github.com/liveproctor/workspaces/pkg/fault"
	authv1 "github.com/liveproctor/workspaces/pkg/gen/auth/v1"
	"github.com/liveproctor/workspaces/pkg/grpcfault"
	"github.com/liveproctor/workspaces/pkg/ratelimit"
)

// loginBackend answers CreateSdkToken by the email's local part, the way
// the auth service can, and keeps the metadata of the last call.
type loginBackend struct {
	authv1.UnimplementedAuthServiceServer
	mu   sync.Mutex
	last metadata.MD
}

func (b *loginBackend) CreateSdkToken(ctx context.Context, req *authv1.CreateSdkTokenRequest) (*authv1.CreateSdkTokenResponse, error) {
	md, _ := metadata.FromIncomingContext(ctx)
	b.mu.Lock()
	b.last = md
	b.mu.Unlock()
	limits := metadata.Pairs(ratelimit.PolicyHeader, `"pair";q=10;w=1`, ratelimit.StateHeader, `"pair";r=9;t=0`, "x-other", "not forwarded")
	local, _, _ := strings.Cut(req.GetEmail(), "@")
	switch local {
	case "ok":
		_ = grpc.SetHeader(ctx, limits)
		return &authv1.CreateSdkTokenResponse{Auth: "dG9rZW4+dG9rZW4=", ExpiresAt: "2026-11-22T15:46:00Z"}, nil
	case "odd": // strings the fast rendering leaves to protojson
		return &authv1.CreateSdkTokenResponse{Auth: "a<b>&\"c\\\n\u00e9", ExpiresAt: "\x01"}, nil
	case "empty":
		return &authv1.CreateSdkTokenResponse{}, nil
	case "limited":
		_ = grpc.SetHeader(ctx, limits)
		return nil, &fault.Error{Kind: fault.Throttled, Message: "too many logins", RetryAfter: 3 * time.Second}
	case "denied":
		return nil, fault.New(fault.Unauthenticated, "the key pair is not valid")
	case "invalid":
		return nil, fault.InvalidField("email", "must be an email address")
	}
	return nil, fault.New(fault.Internal, "unexpected %q", local)
}

func (b *loginBackend) metadata() metadata.MD {
	b.mu.Lock()
	defer b.mu.Unlock()
	md := b.last
	b.last = nil
	return md
}

// TestDirectLoginMatchesGenerated sends the same requests to a gateway
// answering the login with directLogin and to one leaving it to
// grpc-gateway's generated handler, and wants the same answers (status,
// headers, body) and the same metadata at the backend.
func TestDirectLoginMatchesGenerated(t *testing.T) {
	backend := &loginBackend{}
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := grpc.NewServer(grpc.UnaryInterceptor(func(ctx context.Context, req any, _ *grpc.UnaryServerInfo, h grpc.UnaryHandler) (any, error) {
		resp, err := h(ctx, req)
		return resp, grpcfault.Status(err)
	}))
	authv1.RegisterAuthServiceServer(srv, backend)
	go func() { _ = srv.Serve(lis) }()
	t.Cleanup(srv.Stop)

	direct, directServer := startLoginGateway(t, lis.Addr().String(), false)
	generic, genericServer := startLoginGateway(t, lis.Addr().String(), true)
	for _, c := range loginCases() {
		t.Run(c.name, func(t *testing.T) {
			want, wantMD := sendLogin(t, generic, c), backend.metadata()
			got, gotMD := sendLogin(t, direct, c), backend.metadata()
			if !reflect.DeepEqual(got, want) {
				t.Errorf("direct answered\n%+v\ngenerated answered\n%+v", got, want)
			}
			if g, w := comparableMD(gotMD), comparableMD(wantMD); !reflect.DeepEqual(g, w) {
				t.Errorf("direct sent %q\ngenerated sent %q", g, w)
			}
		})
	}
	// Every request the mux let through reached directLogin on one side
	// and the generated handler on the other (the rest were refused by the
	// route's middlewares, on both sides alike).
	if n := directServer.directLogins.Load(); n != int64(len(loginCases())-2) || genericServer.directLogins.Load() != 0 {
		t.Errorf("directLogin answered %d requests of the direct gateway and %d of the generic one",
			n, genericServer.directLogins.Load())
	}
}

type loginCase struct {
	name, query, body string
	header            http.Header
}

func loginCases() []loginCase {
	basic := http.Header{"Authorization": {"Basic YTpi"}, "Content-Type": {"application/json"}}
	with := func(extra http.Header) http.Header {
		h := basic.Clone()
		for k, v := range extra {
			h[k] = v
		}
		return h
	}
	ok := `{"email":"ok@example.com","workspaceId":"w1"}`
	return []loginCase{
		{name: "ok", body: ok, header: basic},
		{name: "forwarding headers", body: ok, header: with(http.Header{
			"If-Match": {`"v1"`}, "X-Forwarded-Host": {"vendor.example"}, "X-Forwarded-For": {"203.0.113.9"},
			"Te": {"trailers"}, "Grpc-Metadata-Authorization": {"Basic eDp5"}, "Grpc-Timeout": {"1S"},
		})},
		{name: "two authorizations", body: ok, header: with(http.Header{"Authorization": {"Basic YTpi", "Basic Yzpk"}})},
		{name: "authorization not ASCII", body: ok, header: with(http.Header{"Authorization": {"Basic \u00e9"}})},
		{name: "no authorization", body: ok, header: http.Header{"Content-Type": {"application/json"}}},
		{name: "escaped strings", body: `{"email":"odd@example.com","workspaceId":"w1"}`, header: basic},
		{name: "empty answer", body: `{"email":"empty@example.com","workspaceId":"w1"}`, header: basic},
		{name: "throttled", body: `{"email":"limited@example.com","workspaceId":"w1"}`, header: basic},
		{name: "unauthenticated", body: `{"email":"denied@example.com","workspaceId":"w1"}`, header: basic},
		{name: "invalid field", body: `{"email":"invalid@example.com","workspaceId":"w1"}`, header: basic},
		{name: "backend fails", body: `{"email":"other@example.com","workspaceId":"w1"}`, header: basic},
		{name: "empty body", body: ``, header: basic},
		{name: "not JSON", body: `{`, header: basic},
		{name: "array", body: `[]`, header: basic},
		{name: "wrong type", body: `{"email":1}`, header: basic},
		{name: "unknown field", body: `{"email":"ok@example.com","nope":true}`, header: basic},
		{name: "trailing data", body: ok + ` {}`, header: basic},
		{name: "text body", body: ok, header: with(http.Header{"Content-Type": {"text/plain"}})},
		{name: "query parameter", query: "?x=1", body: ok, header: basic},
	}
}

// loginAnswer is what a client sees of an answer, less what differs from
// request to request (the date, the request id).
type loginAnswer struct {
	Status int
	Header http.Header
	Body   any
}

func sendLogin(t *testing.T, url string, c loginCase) loginAnswer {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, url+loginPath+c.query, strings.NewReader(c.body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header = c.header.Clone()
	req.Host = "gateway.test" // the same for both gateways
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	id := resp.Header.Get("X-Request-Id")
	if id != "" {
		data = bytes.ReplaceAll(data, []byte(id), []byte("<id>"))
	}
	var body any
	if err := json.Unmarshal(data, &body); err != nil {
		t.Fatalf("%s: %q is not JSON: %v", c.name, data, err)
	}
	h := resp.Header.Clone()
	h.Del("Date")
	h.Del("X-Request-Id")
	// protojson spaces its output at random (to keep callers from relying
	// on its bytes), so the length may differ by a space or two.
	h.Del("Content-Length")
	return loginAnswer{Status: resp.StatusCode, Header: h, Body: body}
}

// comparableMD is the metadata a backend received, less the request id
// (one per request) and the transport's own keys, as "key: value" lines
// (metadata.MD prints its values redacted).
func comparableMD(md metadata.MD) []string {
	var out []string
	for _, k := range slices.Sorted(maps.Keys(md)) {
		switch k {
		case "x-request-id", ":authority", "content-type", "user-agent", "grpc-accept-encoding":
			continue
		}
		for _, v := range md[k] {
			out = append(out, k+": "+v)
		}
	}
	return out
}

func startLoginGateway(t *testing.T, authAddr string, genericLogin bool) (string, *Server) {
	t.Helper()
	cfg := config.Config{
		RequestTimeout:       5 * time.Second,
		MaxBodyBytes:         config.DefaultMaxBodyBytes,
		ShutdownTimeout:      time.Second,
		WorkspaceServiceAddr: authAddr, // never called
		AuthServiceAddr:      authAddr,
	}
	s, err := build(cfg, slog.New(slog.DiscardHandler), genericLogin)
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(s.Handler())
	t.Cleanup(func() {
		ts.Close()
		_ = s.Shutdown(context.Background())
	})
	return ts.URL, s
}
