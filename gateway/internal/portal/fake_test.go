package portal_test

import (
	"context"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/wrapperspb"

	"github.com/liveproctor/workspaces/gateway/internal/portal"
	"github.com/liveproctor/workspaces/pkg/fault"
	workspacev1 "github.com/liveproctor/workspaces/pkg/gen/workspace/v1"
	"github.com/liveproctor/workspaces/pkg/grpcfault"
)

// The session the fake grants, and what it is about.
const (
	token       = "c2Vzc2lvbi10b2tlbi1mb3ItdGhlLXBvcnRhbC10ZXN0"
	linkSecret  = "bGluay1zZWNyZXQtb2YtdGhlLXBvcnRhbC10ZXN0LTAwMA"
	workspaceID = "springfield"
	linkID      = "6f1c2d3e-4b5a-4c7d-8e9f-0a1b2c3d4e5f"
	regID       = "5f0c6a7b-1d2e-4f3a-9b8c-7d6e5f4a3b2c"
	serverKey   = "3b0c1d2e-3f4a-4b5c-8d6e-7f8091a2b3c4"
	ltiKey      = "0b6c1f0e-5d5a-4a57-9a7e-1c2d3e4f5a6b"
	newKey      = "9e8d7c6b-5a49-4382-b1a0-f9e8d7c6b5a4"
	requestID   = "req-portal-1"
)

// Secrets the fake holds, which no page but a rotation's may show.
const (
	serverSecret = "server-secret-5e1f0d6c-never-shown"
	ltiSecret    = "lti-secret-8a7b6c5d-never-shown"
	newSecret    = "successor-secret-4f3e2d1c-shown-once"
)

// call is one call the fake received: its method, request and the session
// token its metadata presented.
type call struct {
	method  string
	req     proto.Message
	session []string
	md      metadata.MD
}

// fakeWorkspaces is the workspace service as the portal sees it: it grants
// the session of token, refuses any other with UNAUTHENTICATED as the
// service does, and records every call.
type fakeWorkspaces struct {
	workspacev1.UnimplementedWorkspaceServiceServer

	mu    sync.Mutex
	calls []call
	// errs answers the methods named with an error instead.
	errs map[string]error
	// keys is what ListWorkspaceKeys answers, secrets included.
	keys   []*workspacev1.KeyPair
	events []*workspacev1.Event
}

func newFake() *fakeWorkspaces {
	tags := []*workspacev1.Tag{{Key: "allow-rest-api-access", Type: "string", Value: "TRUE"}}
	return &fakeWorkspaces{
		errs: map[string]error{},
		keys: []*workspacev1.KeyPair{
			{Name: "server", AppKey: serverKey, AppSecret: serverSecret, Tags: tags, CreateTime: "2026-11-20T08:00:00.000Z",
				LastUseTime: wrapperspb.String("2026-11-26T09:15:00.000Z")},
			{Name: "lti", AppKey: ltiKey, AppSecret: ltiSecret, CreateTime: "2026-11-20T08:00:00.000Z"},
		},
		events: []*workspacev1.Event{{
			Id: "019ab5c0e2a0f3c1d2e4b5a69788", Type: "portalLink.opened", OccurTime: "2026-11-26T10:00:00.000Z", WorkspaceId: workspaceID,
			Actor:  &workspacev1.EventActor{Type: "portal", WorkspaceId: workspaceID, LinkId: proto.String(linkID)},
			Target: &workspacev1.EventTarget{Type: "portalLink", Id: linkID}, RequestId: "req-open",
		}},
	}
}

// record notes a call and answers the error the test set for it, or
// UNAUTHENTICATED when a session's call presents another token.
func (f *fakeWorkspaces) record(ctx context.Context, method string, req proto.Message, needsSession bool) error {
	md, _ := metadata.FromIncomingContext(ctx)
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls = append(f.calls, call{method: method, req: req, session: md.Get(portal.SessionMetadata), md: md})
	if err := f.errs[method]; err != nil {
		return err
	}
	if got := md.Get(portal.SessionMetadata); needsSession && (len(got) != 1 || got[0] != token) {
		return grpcfault.Status(fault.New(fault.Unauthenticated, "the portal session has ended"))
	}
	return nil
}

// received returns the calls received so far, and forgets them.
func (f *fakeWorkspaces) received() []call {
	f.mu.Lock()
	defer f.mu.Unlock()
	calls := f.calls
	f.calls = nil
	return calls
}

// fail makes method answer err (nil: answer again).
func (f *fakeWorkspaces) fail(method string, err error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.errs[method] = err
}

func (f *fakeWorkspaces) OpenPortalLink(ctx context.Context, req *workspacev1.OpenPortalLinkRequest) (*workspacev1.PortalSession, error) {
	if err := f.record(ctx, "OpenPortalLink", req, false); err != nil {
		return nil, err
	}
	if req.GetSecret() != linkSecret {
		return nil, grpcfault.Status(fault.New(fault.Unauthenticated, "the portal link is unknown, used, revoked or expired"))
	}
	s := session()
	s.Token = token
	return s, nil
}

// session is the session the fake grants, without its token.
func session() *workspacev1.PortalSession {
	return &workspacev1.PortalSession{
		WorkspaceId: workspaceID, LinkId: linkID, ReturnUrl: "https://vendor.example/settings",
		ExpireTime: time.Now().Add(time.Hour).UTC().Format("2006-01-02T15:04:05.000Z"),
	}
}

func (f *fakeWorkspaces) GetPortalSession(ctx context.Context, req *workspacev1.GetPortalSessionRequest) (*workspacev1.PortalSession, error) {
	if err := f.record(ctx, "GetPortalSession", req, true); err != nil {
		return nil, err
	}
	s := session()
	s.WorkspaceName = "Springfield District"
	return s, nil
}

func (f *fakeWorkspaces) RevokePortalLink(ctx context.Context, req *workspacev1.RevokePortalLinkRequest) (*workspacev1.PortalLinkRevocation, error) {
	if err := f.record(ctx, "RevokePortalLink", req, true); err != nil {
		return nil, err
	}
	return &workspacev1.PortalLinkRevocation{Id: req.GetLinkId(), Opened: true, RevokeTime: "2026-11-26T10:30:00.000Z"}, nil
}

func (f *fakeWorkspaces) GetLtiConfiguration(ctx context.Context, req *workspacev1.GetLtiConfigurationRequest) (*workspacev1.LtiConfiguration, error) {
	if err := f.record(ctx, "GetLtiConfiguration", req, false); err != nil {
		return nil, err
	}
	const base = "https://lti.example.com"
	return &workspacev1.LtiConfiguration{
		WorkspaceId: req.GetWorkspaceId(), Title: "LiveProctor (Springfield District)", LaunchUrl: base + "/lti/v1/launch", Domain: "lti.example.com",
		Lti13LoginUrl: base + "/lti/v1p3/login", Lti13LaunchUrl: base + "/lti/v1p3/launch", Lti13JwksUrl: base + "/lti/v1p3/jwks.json",
		Lti11ConfigurationUrl:  base + "/lti/v1/workspaces/" + req.GetWorkspaceId() + "/config.xml",
		CanvasConfigurationUrl: base + "/lti/v1p3/workspaces/" + req.GetWorkspaceId() + "/canvas.json",
	}, nil
}

func (f *fakeWorkspaces) CreateLtiRegistrationLink(ctx context.Context, req *workspacev1.CreateLtiRegistrationLinkRequest) (*workspacev1.LtiRegistrationLink, error) {
	if err := f.record(ctx, "CreateLtiRegistrationLink", req, true); err != nil {
		return nil, err
	}
	return &workspacev1.LtiRegistrationLink{Url: "https://lti.example.com/lti/v1p3/register/dr-secret-1", ExpireTime: "2026-11-26T11:00:00.000Z"}, nil
}

// registration is the one registration the workspace holds.
func registration() *workspacev1.LtiRegistration {
	return &workspacev1.LtiRegistration{
		Id: regID, Issuer: "https://canvas.instructure.com", ClientId: "10000000000001", DeploymentIds: []string{"1:8865aa05", "2:odd/id"},
		AuthLoginUrl: "https://sso.canvaslms.com/api/lti/authorize_redirect", JwksUrl: "https://sso.canvaslms.com/api/lti/security/jwks",
		CreateTime: "2026-11-21T08:00:00.000Z", LastLaunchTime: wrapperspb.String("2026-11-26T09:00:00.000Z"),
		RecentFailures: []*workspacev1.LtiLaunchFailure{{
			OccurTime: "2026-11-26T09:30:00.000Z", RequestId: "req-failed-7",
			Reason: "the deployment id 3:new is not registered: add it to the registration",
		}},
	}
}

func (f *fakeWorkspaces) ListLtiRegistrations(ctx context.Context, req *workspacev1.ListLtiRegistrationsRequest) (*workspacev1.ListLtiRegistrationsResponse, error) {
	if err := f.record(ctx, "ListLtiRegistrations", req, true); err != nil {
		return nil, err
	}
	return &workspacev1.ListLtiRegistrationsResponse{Registrations: []*workspacev1.LtiRegistration{registration()}}, nil
}

func (f *fakeWorkspaces) GetLtiRegistration(ctx context.Context, req *workspacev1.GetLtiRegistrationRequest) (*workspacev1.LtiRegistration, error) {
	if err := f.record(ctx, "GetLtiRegistration", req, true); err != nil {
		return nil, err
	}
	if req.GetRegistrationId() != regID {
		return nil, grpcfault.Status(fault.New(fault.NotFound, "LTI registration %s not found", req.GetRegistrationId()))
	}
	return registration(), nil
}

func (f *fakeWorkspaces) CreateLtiRegistration(ctx context.Context, req *workspacev1.CreateLtiRegistrationRequest) (*workspacev1.LtiRegistration, error) {
	if err := f.record(ctx, "CreateLtiRegistration", req, true); err != nil {
		return nil, err
	}
	return registration(), nil
}

func (f *fakeWorkspaces) DeleteLtiRegistration(ctx context.Context, req *workspacev1.DeleteLtiRegistrationRequest) (*workspacev1.LtiRegistration, error) {
	if err := f.record(ctx, "DeleteLtiRegistration", req, true); err != nil {
		return nil, err
	}
	return registration(), nil
}

func (f *fakeWorkspaces) AddLtiDeployment(ctx context.Context, req *workspacev1.AddLtiDeploymentRequest) (*workspacev1.LtiRegistration, error) {
	if err := f.record(ctx, "AddLtiDeployment", req, true); err != nil {
		return nil, err
	}
	return registration(), nil
}

func (f *fakeWorkspaces) RemoveLtiDeployment(ctx context.Context, req *workspacev1.RemoveLtiDeploymentRequest) (*workspacev1.LtiRegistration, error) {
	if err := f.record(ctx, "RemoveLtiDeployment", req, true); err != nil {
		return nil, err
	}
	return registration(), nil
}

func (f *fakeWorkspaces) ListWorkspaceKeys(ctx context.Context, req *workspacev1.ListWorkspaceKeysRequest) (*workspacev1.ListWorkspaceKeysResponse, error) {
	if err := f.record(ctx, "ListWorkspaceKeys", req, true); err != nil {
		return nil, err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	return &workspacev1.ListWorkspaceKeysResponse{Keys: f.keys}, nil
}

// RotateWorkspaceKey answers a successor with newSecret, which the key
// list holds from then on, as the service's does.
func (f *fakeWorkspaces) RotateWorkspaceKey(ctx context.Context, req *workspacev1.RotateWorkspaceKeyRequest) (*workspacev1.RotateWorkspaceKeyResponse, error) {
	if err := f.record(ctx, "RotateWorkspaceKey", req, true); err != nil {
		return nil, err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, k := range f.keys {
		if k.GetAppKey() == req.GetAppKey() {
			previous := proto.Clone(k).(*workspacev1.KeyPair)
			previous.ExpireTime = wrapperspb.String("2026-11-27T10:00:00.000Z")
			next := &workspacev1.KeyPair{Name: k.GetName(), AppKey: newKey, AppSecret: newSecret, Tags: k.GetTags(), CreateTime: "2026-11-26T10:00:00.000Z"}
			f.keys = append(f.keys, next)
			return &workspacev1.RotateWorkspaceKeyResponse{Previous: previous, Successor: next}, nil
		}
	}
	return nil, grpcfault.Status(fault.New(fault.NotFound, "key pair not found"))
}

func (f *fakeWorkspaces) RevokeWorkspaceKey(ctx context.Context, req *workspacev1.RevokeWorkspaceKeyRequest) (*workspacev1.KeyPair, error) {
	if err := f.record(ctx, "RevokeWorkspaceKey", req, true); err != nil {
		return nil, err
	}
	return &workspacev1.KeyPair{AppKey: req.GetAppKey()}, nil
}

func (f *fakeWorkspaces) ListWorkspaceEvents(ctx context.Context, req *workspacev1.ListWorkspaceEventsRequest) (*workspacev1.ListWorkspaceEventsResponse, error) {
	if err := f.record(ctx, "ListWorkspaceEvents", req, true); err != nil {
		return nil, err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	return &workspacev1.ListWorkspaceEventsResponse{Events: f.events, NextPageToken: "next-token+/="}, nil
}

// env is the portal serving real HTTP on loopback in front of the fake,
// served over real gRPC.
type env struct {
	url  string
	fake *fakeWorkspaces
	logs *strings.Builder
}

func newEnv(t *testing.T) *env {
	t.Helper()
	e := &env{fake: newFake(), logs: &strings.Builder{}}
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := grpc.NewServer()
	workspacev1.RegisterWorkspaceServiceServer(s, e.fake)
	go func() { _ = s.Serve(lis) }()
	t.Cleanup(s.Stop)
	conn, err := grpc.NewClient(lis.Addr().String(), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = conn.Close() })
	md := func(context.Context, *http.Request) metadata.MD { return metadata.Pairs("x-request-id", requestID) }
	logger := slog.New(slog.NewTextHandler(io.Discard, nil))
	ts := httptest.NewServer(portal.New(workspacev1.NewWorkspaceServiceClient(conn), md, logger))
	t.Cleanup(ts.Close)
	e.url = ts.URL
	return e
}

// answer is a response with its body read.
type answer struct {
	*http.Response
	body string
}

// noRedirects lets a test see the redirect a post answers.
var noRedirects = &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}

// do sends a request with the headers given; cookie, when not empty, is
// the portal's session cookie.
func (e *env) do(t *testing.T, method, path, cookie string, body url.Values, header http.Header) answer {
	t.Helper()
	var r io.Reader
	if body != nil {
		r = strings.NewReader(body.Encode())
	}
	req, err := http.NewRequest(method, e.url+path, r)
	if err != nil {
		t.Fatal(err)
	}
	for k, vs := range header {
		req.Header[k] = vs
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	if cookie != "" {
		req.AddCookie(&http.Cookie{Name: "portal_session", Value: cookie})
	}
	resp, err := noRedirects.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return answer{Response: resp, body: string(data)}
}

// get fetches a page with the session.
func (e *env) get(t *testing.T, path string) answer {
	t.Helper()
	return e.do(t, http.MethodGet, path, token, nil, nil)
}

// sameSite is what a browser sends with a form posted from the portal's
// own page.
var sameSite = http.Header{"Sec-Fetch-Site": {"same-origin"}}

// post posts a form from a portal page with the session and its CSRF
// token, as read from a page.
func (e *env) post(t *testing.T, path string, form url.Values) answer {
	t.Helper()
	if form == nil {
		form = url.Values{}
	}
	if !form.Has("csrf") {
		form.Set("csrf", e.csrf(t))
	}
	return e.do(t, http.MethodPost, path, token, form, sameSite)
}

// csrf reads the session's CSRF token from the home page's sign-out form.
func (e *env) csrf(t *testing.T) string {
	t.Helper()
	page := e.get(t, "/portal/")
	doc := parse(t, page.body)
	for _, in := range findAll(doc, "input") {
		if attr(in, "name") == "csrf" {
			e.fake.received()
			return attr(in, "value")
		}
	}
	t.Fatalf("no CSRF token on the home page:\n%s", page.body)
	return ""
}
