package grpcport

import (
	"context"
	"errors"
	"testing"

	"google.golang.org/grpc"
	"google.golang.org/grpc/metadata"

	"github.com/liveproctor/workspaces/pkg/basicauth"
	"github.com/liveproctor/workspaces/pkg/fault"
	workspacev1 "github.com/liveproctor/workspaces/pkg/gen/workspace/v1"
	"github.com/liveproctor/workspaces/services/workspace/internal/app"
	"github.com/liveproctor/workspaces/services/workspace/internal/domain"
	"github.com/liveproctor/workspaces/services/workspace/internal/ports/grpccall"
)

// policyFunc is a Policy from a function.
type policyFunc func(ctx context.Context, operation string, creds app.Credentials) (domain.Caller, error)

func (f policyFunc) Admit(ctx context.Context, operation string, creds app.Credentials) (domain.Caller, error) {
	return f(ctx, operation, creds)
}

// The interceptor only translates: the Basic credentials, a portal
// session's token and the method's name go to the policy, and the caller
// it admits reaches the method.
func TestAuthInterceptorHandsTheCallToThePolicy(t *testing.T) {
	refused := errors.New("refused")
	for _, tc := range []struct {
		name          string
		method        string
		authorization []string
		portalSession []string
		wantOp        string // "": the policy is not asked
		wantCreds     app.Credentials
		refuse        bool
		wantKind      fault.Kind // of a refusal that is not the policy's
	}{
		{name: "credentials", method: workspacev1.WorkspaceService_GetWorkspace_FullMethodName,
			authorization: []string{basicauth.Header("key", "secret")},
			wantOp:        "GetWorkspace", wantCreds: app.Credentials{AppKey: "key", AppSecret: "secret"}},
		{name: "portal session", method: workspacev1.WorkspaceService_GetPortalSession_FullMethodName,
			portalSession: []string{"token"}, wantOp: "GetPortalSession", wantCreds: app.Credentials{PortalSession: "token"}},
		{name: "both, for the policy to refuse", method: workspacev1.WorkspaceService_GetWorkspace_FullMethodName,
			authorization: []string{basicauth.Header("key", "secret")}, portalSession: []string{"token"},
			wantOp: "GetWorkspace", wantCreds: app.Credentials{AppKey: "key", AppSecret: "secret", PortalSession: "token"}},
		{name: "two portal sessions", method: workspacev1.WorkspaceService_GetWorkspace_FullMethodName,
			portalSession: []string{"one", "two"}, wantKind: fault.Invalid},
		{name: "none", method: workspacev1.WorkspaceService_Authenticate_FullMethodName, wantOp: "Authenticate"},
		{name: "not Basic", method: workspacev1.WorkspaceService_Authenticate_FullMethodName,
			authorization: []string{"Bearer token"}, wantOp: "Authenticate"},
		{name: "refused", method: workspacev1.WorkspaceService_ListWorkspaces_FullMethodName,
			wantOp: "ListWorkspaces", refuse: true},
		{name: "health check", method: "/grpc.health.v1.Health/Check"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var asked string
			policy := policyFunc(func(_ context.Context, op string, creds app.Credentials) (domain.Caller, error) {
				asked = op
				if creds != tc.wantCreds {
					t.Errorf("credentials %+v, want %+v", creds, tc.wantCreds)
				}
				if tc.refuse {
					return domain.Caller{}, refused
				}
				return domain.Caller{WorkspaceID: "w"}, nil
			})
			md := metadata.MD{}
			if tc.authorization != nil {
				md["authorization"] = tc.authorization
			}
			if tc.portalSession != nil {
				md["portal-session"] = tc.portalSession
			}
			ctx := metadata.NewIncomingContext(context.Background(), md)
			var caller domain.Caller
			_, err := AuthInterceptor(policy)(ctx, nil, &grpc.UnaryServerInfo{FullMethod: tc.method},
				func(ctx context.Context, _ any) (any, error) { caller = grpccall.Caller(ctx); return nil, nil })
			if asked != tc.wantOp {
				t.Errorf("policy asked about %q, want %q", asked, tc.wantOp)
			}
			switch {
			case tc.wantKind != fault.Internal:
				if fault.KindOf(err) != tc.wantKind {
					t.Errorf("error %v, want %v", err, tc.wantKind)
				}
			case tc.refuse && !errors.Is(err, refused):
				t.Errorf("error %v, want the policy's", err)
			case !tc.refuse && err != nil:
				t.Errorf("error %v", err)
			case tc.wantOp != "" && !tc.refuse && caller.WorkspaceID != "w":
				t.Errorf("the method saw caller %+v, want the policy's", caller)
			}
		})
	}
}
