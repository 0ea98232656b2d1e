package grpcport_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"strings"
	"testing"
	"time"

	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/liveproctor/workspaces/pkg/basicauth"
	workspacev1 "github.com/liveproctor/workspaces/pkg/gen/workspace/v1"
	"github.com/liveproctor/workspaces/pkg/grpcmw"
	"github.com/liveproctor/workspaces/pkg/ident"
	"github.com/liveproctor/workspaces/pkg/restrules"
	"github.com/liveproctor/workspaces/services/workspace/internal/adapters/memstore"
	"github.com/liveproctor/workspaces/services/workspace/internal/adapters/secretbox"
	"github.com/liveproctor/workspaces/services/workspace/internal/app"
	"github.com/liveproctor/workspaces/services/workspace/internal/portal/adapters/portalstate"
	portalapp "github.com/liveproctor/workspaces/services/workspace/internal/portal/app"
	portaldomain "github.com/liveproctor/workspaces/services/workspace/internal/portal/domain"
	portalgrpcport "github.com/liveproctor/workspaces/services/workspace/internal/portal/ports/grpcport"
	"github.com/liveproctor/workspaces/services/workspace/internal/ports/grpcport"
)

const rootKey, rootSecret = "00000000-0000-4000-8000-000000000001", "00000000-0000-4000-8000-000000000002"

// serve runs the workspace service's gRPC server on a loopback port, with
// the interceptors that turn errors into statuses and admit calls, over
// the application in memory with a bootstrapped root, and returns a
// client of it.
func serve(t *testing.T) workspacev1.WorkspaceServiceClient {
	t.Helper()
	box, err := secretbox.New(bytes.Repeat([]byte{1}, 32), bytes.Repeat([]byte{2}, 32))
	if err != nil {
		t.Fatal(err)
	}
	store := portalstate.NewMemoryStore(100, nil)
	settings := portalapp.Settings{BaseURL: "https://proctor.test"}
	repo := memstore.New()
	a := app.New(repo, box, app.Settings{}, app.WithEventLog(repo, app.EventSettings{}),
		app.WithPortalSessions(portalapp.NewSessions(store, settings)))
	if _, err := a.Bootstrap(context.Background(), app.BootstrapConfig{WorkspaceID: "root", Name: "Root", AppKey: rootKey, AppSecret: rootSecret}); err != nil {
		t.Fatal(err)
	}
	logger := slog.New(slog.NewTextHandler(io.Discard, nil))
	srv := grpc.NewServer(grpc.ChainUnaryInterceptor(grpcmw.ErrorInterceptor(logger, 5*time.Second), grpcport.AuthInterceptor(a)))
	workspacev1.RegisterWorkspaceServiceServer(srv, grpcport.NewServer(a, nil, nil,
		portalgrpcport.NewServer(portalapp.New(app.NewPortalPort(a), store, settings))))
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = srv.Serve(lis) }()
	t.Cleanup(srv.Stop)
	conn, err := grpc.NewClient(lis.Addr().String(), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = conn.Close() })
	return workspacev1.NewWorkspaceServiceClient(conn)
}

// as is ctx calling with the root's key pair.
func asRoot(ctx context.Context) context.Context {
	return metadata.AppendToOutgoingContext(ctx, "authorization", basicauth.Header(rootKey, rootSecret))
}

// inPortal is ctx calling with a portal session's token.
func inPortal(ctx context.Context, token string) context.Context {
	return metadata.AppendToOutgoingContext(ctx, "portal-session", token)
}

func wantCode(t *testing.T, what string, err error, code codes.Code) {
	t.Helper()
	if status.Code(err) != code {
		t.Errorf("%s: %v, want %v", what, err, code)
	}
}

// A link made with a key pair, opened with its secret alone, and the
// session it starts presented as portal-session metadata: over gRPC as
// the gateway calls.
func TestPortalOverGRPC(t *testing.T) {
	c := serve(t)
	ctx := context.Background()
	link, err := c.CreatePortalLink(asRoot(ctx), &workspacev1.CreatePortalLinkRequest{Id: "root", ReturnUrl: proto.String("https://vendor.example/")})
	if err != nil {
		t.Fatal(err)
	}
	secret, ok := strings.CutPrefix(link.GetUrl(), "https://proctor.test/portal/open/")
	if !ok || !ident.IsSecret(secret) || !portaldomain.IsLinkID(link.GetId()) || link.GetExpireTime() == "" {
		t.Fatalf("link %v", link)
	}
	session, err := c.OpenPortalLink(ctx, &workspacev1.OpenPortalLinkRequest{Secret: secret})
	if err != nil {
		t.Fatal(err)
	}
	if !ident.IsSecret(session.GetToken()) || session.GetWorkspaceId() != "root" || session.GetLinkId() != link.GetId() ||
		session.GetReturnUrl() != "https://vendor.example/" {
		t.Fatalf("session %v", session)
	}
	_, err = c.OpenPortalLink(ctx, &workspacev1.OpenPortalLinkRequest{Secret: secret})
	wantCode(t, "opening a link again", err, codes.Unauthenticated)

	portal := inPortal(ctx, session.GetToken())
	read, err := c.GetPortalSession(portal, &workspacev1.GetPortalSessionRequest{})
	if err != nil || read.GetToken() != "" || read.GetLinkId() != link.GetId() || read.GetExpireTime() != session.GetExpireTime() {
		t.Fatalf("GetPortalSession = %v, %v; want the session without its token", read, err)
	}
	if keys, err := c.ListWorkspaceKeys(portal, &workspacev1.ListWorkspaceKeysRequest{Id: "root"}); err != nil || len(keys.GetKeys()) == 0 {
		t.Fatalf("ListWorkspaceKeys in the portal = %v, %v", keys, err)
	}
	_, err = c.ListWorkspaces(portal, &workspacev1.ListWorkspacesRequest{})
	wantCode(t, "ListWorkspaces in the portal", err, codes.PermissionDenied)
	_, err = c.GetWorkspace(inPortal(ctx, ident.NewSecret()), &workspacev1.GetWorkspaceRequest{Id: "root"})
	wantCode(t, "an unknown session", err, codes.Unauthenticated)
	_, err = c.GetWorkspace(inPortal(asRoot(ctx), session.GetToken()), &workspacev1.GetWorkspaceRequest{Id: "root"})
	wantCode(t, "a key pair and a session", err, codes.InvalidArgument)
	_, err = c.GetPortalSession(asRoot(ctx), &workspacev1.GetPortalSessionRequest{})
	wantCode(t, "GetPortalSession with a key pair", err, codes.PermissionDenied)

	revoked, err := c.RevokePortalLink(portal, &workspacev1.RevokePortalLinkRequest{Id: "root", LinkId: link.GetId()})
	if err != nil || revoked.GetId() != link.GetId() || !revoked.GetOpened() || revoked.GetRevokeTime() == "" {
		t.Fatalf("signing out = %v, %v", revoked, err)
	}
	_, err = c.GetPortalSession(portal, &workspacev1.GetPortalSessionRequest{})
	wantCode(t, "the session after signing out", err, codes.Unauthenticated)
	again, err := c.RevokePortalLink(asRoot(ctx), &workspacev1.RevokePortalLinkRequest{Id: "root", LinkId: link.GetId()})
	if err != nil || !proto.Equal(again, revoked) {
		t.Errorf("revoking again = %v, %v; want %v", again, err, revoked)
	}
	_, err = c.RevokePortalLink(asRoot(ctx), &workspacev1.RevokePortalLinkRequest{Id: "root", LinkId: "0f8e2c1a-3b4d-4e5f-8a9b-0c1d2e3f4a5b"})
	wantCode(t, "revoking an unknown link", err, codes.NotFound)
}

// A refused returnUrl names the field, as REST callers see it.
func TestReturnURLRefusalNamesTheField(t *testing.T) {
	c := serve(t)
	_, err := c.CreatePortalLink(asRoot(context.Background()), &workspacev1.CreatePortalLinkRequest{Id: "root", ReturnUrl: proto.String("http://vendor.example/")})
	st := status.Convert(err)
	var fields []string
	for _, d := range st.Details() {
		if br, ok := d.(*errdetails.BadRequest); ok {
			for _, v := range br.GetFieldViolations() {
				fields = append(fields, v.GetField())
			}
		}
	}
	if st.Code() != codes.InvalidArgument || fmt.Sprint(fields) != "[returnUrl]" {
		t.Fatalf("an http returnUrl: %v %v, want InvalidArgument naming returnUrl", st.Code(), fields)
	}
}

// The document states the returnUrl's bound; the domain checks it.
func TestReturnURLBoundIsTheDomains(t *testing.T) {
	field := (&workspacev1.CreatePortalLinkRequest{}).ProtoReflect().Descriptor().Fields().ByName(protoreflect.Name("return_url"))
	r := restrules.Field(field)
	if r.GetMaxLength() != portaldomain.MaxReturnURLLength || r.GetFormat() != "uri" {
		t.Errorf("return_url: max %d, format %q; want %d, uri", r.GetMaxLength(), r.GetFormat(), portaldomain.MaxReturnURLLength)
	}
}
