// Package workspaceclient asks the workspace service about workspaces, for
// the auth service's access checks.
package workspaceclient

import (
	"context"
	"fmt"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	"github.com/liveproctor/workspaces/pkg/apitime"
	"github.com/liveproctor/workspaces/pkg/fault"
	workspacev1 "github.com/liveproctor/workspaces/pkg/gen/workspace/v1"
	"github.com/liveproctor/workspaces/pkg/grpcfault"
	"github.com/liveproctor/workspaces/pkg/grpcmw"
	"github.com/liveproctor/workspaces/services/auth/internal/app"
)

// Client implements app.Workspaces over gRPC.
type Client struct {
	client  workspacev1.WorkspaceServiceClient
	timeout time.Duration
}

var (
	_ app.Workspaces    = (*Client)(nil)
	_ app.Launches      = (*Client)(nil)
	_ app.LTI13Launches = (*Client)(nil)
)

// New returns a client on conn; each call is bounded by timeout.
func New(conn grpc.ClientConnInterface, timeout time.Duration) *Client {
	return &Client{client: workspacev1.NewWorkspaceServiceClient(conn), timeout: timeout}
}

// Status calls GetWorkspaceStatus presenting authorization.
func (c *Client) Status(ctx context.Context, authorization, workspaceID string) (app.WorkspaceStatus, error) {
	ctx, cancel := context.WithTimeout(grpcmw.OutgoingRequestID(ctx), c.timeout)
	defer cancel()
	ctx = metadata.AppendToOutgoingContext(ctx, "authorization", authorization)
	st, err := c.client.GetWorkspaceStatus(ctx, &workspacev1.GetWorkspaceStatusRequest{Id: workspaceID})
	if err != nil {
		return app.WorkspaceStatus{}, remoteError(err)
	}
	out := app.WorkspaceStatus{Active: st.GetActive()}
	if r := st.GetCallerRateLimit(); r != nil {
		out.CallerLimit = app.RateLimit{PerSecond: int(r.GetRequestsPerSecond()), Burst: int(r.GetBurst())}
	}
	if s := st.GetCallerKeyExpireTime(); s != "" {
		if out.CallerKeyExpiresAt, err = apitime.Parse(s); err != nil {
			return app.WorkspaceStatus{}, fault.Wrap(fault.Internal, fmt.Errorf("workspace status: caller_key_expire_time %q: %w", s, err), "internal error")
		}
	}
	if s := st.GetTokenCutoffTime(); s != "" {
		if out.TokenCutoff, err = apitime.Parse(s); err != nil {
			return app.WorkspaceStatus{}, fault.Wrap(fault.Internal, fmt.Errorf("workspace status: token_cutoff_time %q: %w", s, err), "internal error")
		}
	}
	return out, nil
}

// RecordRevocation calls RecordSessionRevocation presenting authorization.
func (c *Client) RecordRevocation(ctx context.Context, authorization string, r app.Revocation) error {
	ctx, cancel := context.WithTimeout(grpcmw.OutgoingRequestID(ctx), c.timeout)
	defer cancel()
	ctx = metadata.AppendToOutgoingContext(ctx, "authorization", authorization)
	_, err := c.client.RecordSessionRevocation(ctx, &workspacev1.RecordSessionRevocationRequest{
		WorkspaceId: r.WorkspaceID, User: r.User, ActorAppKey: r.ActorAppKey,
	})
	if err != nil {
		return remoteError(err)
	}
	return nil
}

// VerifyLaunch calls VerifyLtiLaunch presenting authorization.
func (c *Client) VerifyLaunch(ctx context.Context, authorization, method string, params []app.LaunchParameter) (app.Launch, error) {
	ctx, cancel := context.WithTimeout(grpcmw.OutgoingRequestID(ctx), c.timeout)
	defer cancel()
	ctx = metadata.AppendToOutgoingContext(ctx, "authorization", authorization)
	req := &workspacev1.VerifyLtiLaunchRequest{Method: method, Parameters: make([]*workspacev1.LtiParameter, len(params))}
	for i, p := range params {
		req.Parameters[i] = &workspacev1.LtiParameter{Name: p.Name, Value: p.Value}
	}
	l, err := c.client.VerifyLtiLaunch(ctx, req)
	if err != nil {
		return app.Launch{}, remoteError(err)
	}
	out := app.Launch{
		WorkspaceID:      l.GetWorkspaceId(),
		Email:            l.GetEmail(),
		EmailDerived:     l.GetEmailDerived(),
		ReturnURL:        l.GetLaunchPresentationReturnUrl(),
		CustomParameters: make([]app.LaunchParameter, len(l.GetCustomParameters())),
	}
	for i, p := range l.GetCustomParameters() {
		out.CustomParameters[i] = app.LaunchParameter{Name: p.GetName(), Value: p.GetValue()}
	}
	return out, nil
}

// VerifyLTI13Launch calls VerifyLti13Launch presenting authorization.
func (c *Client) VerifyLTI13Launch(ctx context.Context, authorization, idToken, state string, browser app.LTI13BrowserProof) (app.LTI13Launch, error) {
	ctx, cancel := context.WithTimeout(grpcmw.OutgoingRequestID(ctx), c.timeout)
	defer cancel()
	ctx = metadata.AppendToOutgoingContext(ctx, "authorization", authorization)
	l, err := c.client.VerifyLti13Launch(ctx, &workspacev1.VerifyLti13LaunchRequest{
		IdToken: idToken, State: state,
		BrowserState: browser.State, BrowserNonce: browser.Nonce, FromPlatformStorage: browser.FromStorage,
	})
	if err != nil {
		return app.LTI13Launch{}, launchError(err)
	}
	out := app.LTI13Launch{
		Launch: app.Launch{
			WorkspaceID:      l.GetWorkspaceId(),
			Email:            l.GetEmail(),
			EmailDerived:     l.GetEmailDerived(),
			ReturnURL:        l.GetLaunchPresentationReturnUrl(),
			CustomParameters: make([]app.LaunchParameter, len(l.GetCustomParameters())),
		},
		MessageType:       l.GetMessageType(),
		RegistrationID:    l.GetRegistrationId(),
		DeploymentID:      l.GetDeploymentId(),
		DeepLinkReturnURL: l.GetDeepLinking().GetReturnUrl(),
		DeepLinkData:      l.GetDeepLinking().GetData(),
		DeepLinkID:        l.GetDeepLinking().GetDeepLinkId(),
		LaunchID:          l.GetLaunchId(),
	}
	for i, p := range l.GetCustomParameters() {
		out.CustomParameters[i] = app.LaunchParameter{Name: p.GetName(), Value: p.GetValue()}
	}
	return out, nil
}

// launchError is remoteError, except that the workspace service's own
// UNAVAILABLE answer to a launch is kept: it says what is down (the
// platform's keys could not be fetched), where a transport failure's
// says nothing the caller may read.
func launchError(err error) error {
	if st, ok := status.FromError(err); ok {
		if kind, named := grpcfault.KindOf(st); named && kind == fault.Unavailable {
			return grpcfault.Fault(err)
		}
	}
	return remoteError(err)
}

// remoteError keeps the workspace service's answers to the caller
// (credentials, visibility) and hides transport details behind a plain
// "unavailable", which is also what a call past its timeout means here.
func remoteError(err error) error {
	f := grpcfault.Fault(err)
	switch fault.KindOf(f) {
	case fault.Unavailable, fault.DeadlineExceeded:
		return fault.Wrap(fault.Unavailable, err, "the workspace service is unavailable; retry shortly")
	case fault.Internal:
		return fault.Wrap(fault.Internal, err, "internal error")
	}
	return f
}
