package server_test

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	"github.com/liveproctor/workspaces/gateway/internal/config"
	"github.com/liveproctor/workspaces/gateway/internal/server"
	authv1 "github.com/liveproctor/workspaces/pkg/gen/auth/v1"
	workspacev1 "github.com/liveproctor/workspaces/pkg/gen/workspace/v1"
)

// fakeWorkspaces is a WorkspaceService that records what it receives and
// answers with canned values.
type fakeWorkspaces struct {
	workspacev1.UnimplementedWorkspaceServiceServer

	mu     sync.Mutex
	md     metadata.MD
	get    *workspacev1.GetWorkspaceRequest
	update *workspacev1.UpdateWorkspaceRequest
	list   *workspacev1.ListWorkspacesRequest
	// webhookUpdate is the last UpdateWebhook request (webhook_test.go).
	webhookUpdate *workspacev1.UpdateWebhookRequest

	// Canned answers, set before the calls.
	workspace *workspacev1.Workspace
	keys      []*workspacev1.KeyPair
	err       error
	header    metadata.MD
	// hang makes every call wait until its context ends, as a stuck
	// backend would.
	hang bool
}

func (f *fakeWorkspaces) answer(ctx context.Context) error {
	md, _ := metadata.FromIncomingContext(ctx)
	f.mu.Lock()
	f.md = md
	f.mu.Unlock()
	if f.header != nil {
		_ = grpc.SetHeader(ctx, f.header)
		_ = grpc.SetTrailer(ctx, metadata.Pairs("x-trailer", "hidden"))
	}
	if f.hang {
		<-ctx.Done()
		return ctx.Err()
	}
	return f.err
}

func (f *fakeWorkspaces) GetWorkspace(ctx context.Context, req *workspacev1.GetWorkspaceRequest) (*workspacev1.Workspace, error) {
	f.mu.Lock()
	f.get = req
	f.mu.Unlock()
	if err := f.answer(ctx); err != nil {
		return nil, err
	}
	return f.workspace, nil
}

func (f *fakeWorkspaces) UpdateWorkspace(ctx context.Context, req *workspacev1.UpdateWorkspaceRequest) (*workspacev1.Workspace, error) {
	f.mu.Lock()
	f.update = req
	f.mu.Unlock()
	if err := f.answer(ctx); err != nil {
		return nil, err
	}
	return f.workspace, nil
}

func (f *fakeWorkspaces) ListWorkspaceKeys(ctx context.Context, _ *workspacev1.ListWorkspaceKeysRequest) (*workspacev1.ListWorkspaceKeysResponse, error) {
	if err := f.answer(ctx); err != nil {
		return nil, err
	}
	return &workspacev1.ListWorkspaceKeysResponse{Keys: f.keys}, nil
}

func (f *fakeWorkspaces) ListWorkspaces(ctx context.Context, req *workspacev1.ListWorkspacesRequest) (*workspacev1.ListWorkspacesResponse, error) {
	f.mu.Lock()
	f.list = req
	f.mu.Unlock()
	if err := f.answer(ctx); err != nil {
		return nil, err
	}
	return &workspacev1.ListWorkspacesResponse{}, nil
}

// OpenPortalLink opens every link with the token "portal-token", for an
// hour.
func (f *fakeWorkspaces) OpenPortalLink(ctx context.Context, _ *workspacev1.OpenPortalLinkRequest) (*workspacev1.PortalSession, error) {
	if err := f.answer(ctx); err != nil {
		return nil, err
	}
	return &workspacev1.PortalSession{Token: "portal-token", WorkspaceId: "w1", ExpireTime: time.Now().Add(time.Hour).UTC().Format(time.RFC3339)}, nil
}

// got returns the last get request received, and forgets it.
func (f *fakeWorkspaces) got() *workspacev1.GetWorkspaceRequest {
	f.mu.Lock()
	defer f.mu.Unlock()
	req := f.get
	f.get = nil
	return req
}

// listed returns the last list request received, and forgets it.
func (f *fakeWorkspaces) listed() *workspacev1.ListWorkspacesRequest {
	f.mu.Lock()
	defer f.mu.Unlock()
	req := f.list
	f.list = nil
	return req
}

func (f *fakeWorkspaces) received() (metadata.MD, *workspacev1.UpdateWorkspaceRequest) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.md, f.update
}

// fakeAuth is an AuthService that issues a fixed token.
type fakeAuth struct {
	authv1.UnimplementedAuthServiceServer
	mu  sync.Mutex
	req *authv1.CreateSdkTokenRequest

	// sessionCalls counts GetSdkSession and DeleteSdkSession calls.
	sessionCalls atomic.Int64

	// launch is the last CreateLtiSession request, with its metadata;
	// launchErr, when set, is its answer.
	launch    *authv1.CreateLtiSessionRequest
	launchMD  metadata.MD
	launchErr error
}

// CreateLtiSession opens a session for every launch unless launchErr is set;
// the session has the launch's custom_* parameters, as the auth service
// passes them on from the workspace service.
func (f *fakeAuth) CreateLtiSession(ctx context.Context, req *authv1.CreateLtiSessionRequest) (*authv1.LtiSession, error) {
	md, _ := metadata.FromIncomingContext(ctx)
	f.mu.Lock()
	defer f.mu.Unlock()
	f.launch, f.launchMD = req, md
	if f.launchErr != nil {
		return nil, f.launchErr
	}
	s := &authv1.LtiSession{Auth: "bGF1bmNoZWQ=", ExpiresAt: "2026-11-22T15:46:00Z", Email: "ada@example.com", WorkspaceId: "w1"}
	for _, p := range req.GetParameters() {
		if strings.HasPrefix(p.GetName(), "custom_") {
			s.CustomParameters = append(s.CustomParameters, p)
		}
	}
	return s, nil
}

// lastLaunch returns the last launch received and its metadata, and
// forgets them.
func (f *fakeAuth) lastLaunch() (*authv1.CreateLtiSessionRequest, metadata.MD) {
	f.mu.Lock()
	defer f.mu.Unlock()
	req, md := f.launch, f.launchMD
	f.launch, f.launchMD = nil, nil
	return req, md
}

func (f *fakeAuth) CreateSdkToken(_ context.Context, req *authv1.CreateSdkTokenRequest) (*authv1.CreateSdkTokenResponse, error) {
	f.mu.Lock()
	f.req = req
	f.mu.Unlock()
	return &authv1.CreateSdkTokenResponse{Auth: "dG9rZW4=", ExpiresAt: "2026-11-22T15:46:00Z"}, nil
}

// GetSdkSession answers for the Bearer token "good" and refuses others.
func (f *fakeAuth) GetSdkSession(ctx context.Context, _ *authv1.GetSdkSessionRequest) (*authv1.SdkSession, error) {
	f.sessionCalls.Add(1)
	md, _ := metadata.FromIncomingContext(ctx)
	if got := md.Get("authorization"); len(got) != 1 || got[0] != "Bearer good" {
		return nil, status.Error(codes.Unauthenticated, "the SDK token is not valid")
	}
	return &authv1.SdkSession{Email: "a@b.c", WorkspaceId: "w1", ExpiresAt: "2026-11-22T15:46:00Z"}, nil
}

// DeleteSdkSession revokes nothing and counts the call.
func (f *fakeAuth) DeleteSdkSession(context.Context, *authv1.DeleteSdkSessionRequest) (*authv1.DeleteSdkSessionResponse, error) {
	f.sessionCalls.Add(1)
	return &authv1.DeleteSdkSessionResponse{}, nil
}

// startGRPC serves the registered services and a health service reporting
// SERVING on a loopback port, returning its address.
func startGRPC(t *testing.T, register func(*grpc.Server)) string {
	t.Helper()
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := grpc.NewServer()
	register(s)
	hs := health.NewServer()
	hs.SetServingStatus("", healthpb.HealthCheckResponse_SERVING)
	healthpb.RegisterHealthServer(s, hs)
	go func() { _ = s.Serve(lis) }()
	t.Cleanup(s.Stop)
	return lis.Addr().String()
}

// closedAddr returns a loopback address nothing listens on.
func closedAddr(t *testing.T) string {
	t.Helper()
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := lis.Addr().String()
	_ = lis.Close()
	return addr
}

// syncBuffer is a log sink safe for concurrent writes.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// env is a gateway serving real HTTP on loopback in front of fakes served
// over real gRPC.
type env struct {
	url        string
	server     *server.Server
	workspaces *fakeWorkspaces
	auth       *fakeAuth
	logs       *syncBuffer
}

// options adjusts an env before it starts.
type options struct {
	timeout       time.Duration
	workspaceDown bool
	authDown      bool
	maxBodyBytes  int64
	corsOrigins   []string
}

func newEnv(t *testing.T, o options) *env {
	t.Helper()
	e := &env{workspaces: &fakeWorkspaces{}, auth: &fakeAuth{}, logs: &syncBuffer{}}
	cfg := config.Config{
		RequestTimeout:  5 * time.Second,
		MaxBodyBytes:    config.DefaultMaxBodyBytes,
		ShutdownTimeout: time.Second,
	}
	if o.timeout > 0 {
		cfg.RequestTimeout = o.timeout
	}
	if o.maxBodyBytes > 0 {
		cfg.MaxBodyBytes = o.maxBodyBytes
	}
	cfg.CORSAllowedOrigins = o.corsOrigins
	if o.workspaceDown {
		cfg.WorkspaceServiceAddr = closedAddr(t)
	} else {
		cfg.WorkspaceServiceAddr = startGRPC(t, func(s *grpc.Server) { workspacev1.RegisterWorkspaceServiceServer(s, e.workspaces) })
	}
	if o.authDown {
		cfg.AuthServiceAddr = closedAddr(t)
	} else {
		cfg.AuthServiceAddr = startGRPC(t, func(s *grpc.Server) { authv1.RegisterAuthServiceServer(s, e.auth) })
	}
	logger := slog.New(slog.NewTextHandler(e.logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	srv, err := server.New(cfg, logger)
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(srv.Handler())
	t.Cleanup(func() {
		ts.Close()
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		if err := srv.Shutdown(ctx); err != nil {
			t.Errorf("shutdown: %v", err)
		}
	})
	e.url = ts.URL
	e.server = srv
	return e
}

// do sends a request and returns the response with its body read.
func (e *env) do(t *testing.T, method, path string, body io.Reader, header map[string]string) (*http.Response, []byte) {
	t.Helper()
	req, err := http.NewRequest(method, e.url+path, body)
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range header {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp, data
}
