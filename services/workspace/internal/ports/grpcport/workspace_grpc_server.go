// Package grpcport is the workspace service's gRPC face: it converts between
// protos and the application, and nothing else.
package grpcport

import (
	"context"

	"google.golang.org/grpc"
	"google.golang.org/grpc/metadata"

	"github.com/liveproctor/workspaces/pkg/apitime"
	workspacev1 "github.com/liveproctor/workspaces/pkg/gen/workspace/v1"
	"github.com/liveproctor/workspaces/services/workspace/internal/app"
	"github.com/liveproctor/workspaces/services/workspace/internal/domain"
	ltigrpcport "github.com/liveproctor/workspaces/services/workspace/internal/lti/ports/grpcport"
	portalgrpcport "github.com/liveproctor/workspaces/services/workspace/internal/portal/ports/grpcport"
	"github.com/liveproctor/workspaces/services/workspace/internal/ports/grpccall"
	webhookgrpcport "github.com/liveproctor/workspaces/services/workspace/internal/webhook/ports/grpcport"
)

// Server implements workspacev1.WorkspaceServiceServer: the workspace
// application's methods here, the LTI, webhook and portal contexts'
// through their own ports. One gRPC service, so one registration, one set
// of interceptors and one policy (app.Admit) for all.
type Server struct {
	workspacev1.UnimplementedWorkspaceServiceServer
	app      *app.App
	lti      *ltigrpcport.Server
	webhooks *webhookgrpcport.Server
	portal   *portalgrpcport.Server
}

var _ workspacev1.WorkspaceServiceServer = (*Server)(nil)

// NewServer returns the gRPC server of the workspace application and the
// LTI, webhook and portal contexts' ports.
func NewServer(a *app.App, lti *ltigrpcport.Server, webhooks *webhookgrpcport.Server, portal *portalgrpcport.Server) *Server {
	return &Server{app: a, lti: lti, webhooks: webhooks, portal: portal}
}

func (s *Server) ListWorkspaces(ctx context.Context, req *workspacev1.ListWorkspacesRequest) (*workspacev1.ListWorkspacesResponse, error) {
	res, err := s.app.ListWorkspaces(ctx, grpccall.Caller(ctx), app.ListInput{
		Search:    req.GetFilter().GetSearch(),
		States:    req.GetFilter().GetAddressState().GetInclude(),
		PageSize:  req.PageSize,
		PageToken: req.GetPageToken(),
	})
	if err != nil {
		return nil, grpccall.Error(err)
	}
	out := &workspacev1.ListWorkspacesResponse{
		Workspaces:    make([]*workspacev1.Workspace, len(res.Workspaces)),
		NextPageToken: res.NextPageToken,
	}
	for i, w := range res.Workspaces {
		out.Workspaces[i] = workspaceToProto(w)
	}
	return out, nil
}

func (s *Server) GetWorkspace(ctx context.Context, req *workspacev1.GetWorkspaceRequest) (*workspacev1.Workspace, error) {
	return withETag(ctx)(s.app.GetWorkspace(ctx, grpccall.Caller(ctx), req.GetId()))
}

func (s *Server) ListWorkspaceKeys(ctx context.Context, req *workspacev1.ListWorkspaceKeysRequest) (*workspacev1.ListWorkspaceKeysResponse, error) {
	keys, err := s.app.ListWorkspaceKeys(ctx, grpccall.Caller(ctx), req.GetId())
	if err != nil {
		return nil, grpccall.Error(err)
	}
	out := &workspacev1.ListWorkspaceKeysResponse{Keys: make([]*workspacev1.KeyPair, len(keys))}
	for i, k := range keys {
		out.Keys[i] = keyPairToProto(k)
	}
	return out, nil
}

func (s *Server) CreateWorkspace(ctx context.Context, req *workspacev1.CreateWorkspaceRequest) (*workspacev1.CreateWorkspaceResponse, error) {
	res, err := s.app.CreateWorkspace(ctx, grpccall.Caller(ctx), app.CreateInput{
		ID:        req.GetId(),
		Name:      req.GetName(),
		Type:      req.GetType(),
		ParentID:  req.GetParentWorkspaceId().GetValue(),
		Address:   addressFromProto(req.GetAddress()),
		Products:  productsFromProto(req.GetProducts()),
		RateLimit: rateLimitFromProto(req.GetRateLimit()),
	})
	if err != nil {
		return nil, grpccall.Error(err)
	}
	return createResultToProto(res), nil
}

func (s *Server) UpdateWorkspace(ctx context.Context, req *workspacev1.UpdateWorkspaceRequest) (*workspacev1.Workspace, error) {
	changes, err := updateChanges(req)
	if err != nil {
		return nil, err
	}
	return withETag(ctx)(s.app.UpdateWorkspace(ctx, grpccall.Caller(ctx), app.UpdateInput{
		ID:           req.GetId(),
		Changes:      changes,
		Precondition: precondition(ctx, req.GetEtag()),
	}))
}

func (s *Server) DeleteWorkspace(ctx context.Context, req *workspacev1.DeleteWorkspaceRequest) (*workspacev1.Workspace, error) {
	return withETag(ctx)(s.app.DeleteWorkspace(ctx, grpccall.Caller(ctx), req.GetId(), precondition(ctx, req.GetEtag())))
}

func (s *Server) UndeleteWorkspace(ctx context.Context, req *workspacev1.UndeleteWorkspaceRequest) (*workspacev1.Workspace, error) {
	return withETag(ctx)(s.app.UndeleteWorkspace(ctx, grpccall.Caller(ctx), req.GetId()))
}

func (s *Server) Authenticate(ctx context.Context, _ *workspacev1.AuthenticateRequest) (*workspacev1.AuthenticateResponse, error) {
	c := grpccall.Caller(ctx)
	return &workspacev1.AuthenticateResponse{WorkspaceId: c.WorkspaceID, AppKey: c.AppKey, Tags: tagsToProto(c.Tags)}, nil
}

// withETag converts a workspace result and sends its etag as the "etag"
// response header, which the gateway turns into the HTTP ETag header.
func withETag(ctx context.Context) func(*domain.Workspace, error) (*workspacev1.Workspace, error) {
	return func(w *domain.Workspace, err error) (*workspacev1.Workspace, error) {
		if err != nil {
			return nil, grpccall.Error(err)
		}
		_ = grpc.SetHeader(ctx, metadata.Pairs("etag", etag(w.Revision())))
		return workspaceToProto(w), nil
	}
}

func (s *Server) GetWorkspaceStatus(ctx context.Context, req *workspacev1.GetWorkspaceStatusRequest) (*workspacev1.WorkspaceStatus, error) {
	caller := grpccall.Caller(ctx)
	w, err := s.app.GetWorkspaceStatus(ctx, caller, req.GetId())
	if err != nil {
		return nil, grpccall.Error(err)
	}
	out := &workspacev1.WorkspaceStatus{Id: w.ID(), Active: !w.Deleted()}
	if cutoff := w.TokenCutoff(); !cutoff.IsZero() {
		out.TokenCutoffTime = apitime.Format(cutoff)
	}
	if r := caller.RateLimit; r != nil {
		out.CallerRateLimit = rateLimitToProto(*r)
	}
	if exp := caller.KeyExpiresAt; !exp.IsZero() {
		out.CallerKeyExpireTime = apitime.Format(exp)
	}
	return out, nil
}
