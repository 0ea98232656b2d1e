package grpcport

import (
	"context"

	"github.com/liveproctor/workspaces/pkg/apitime"
	workspacev1 "github.com/liveproctor/workspaces/pkg/gen/workspace/v1"
	"github.com/liveproctor/workspaces/services/workspace/internal/ports/grpccall"
)

func (s *Server) GetLtiLaunch(ctx context.Context, req *workspacev1.GetLtiLaunchRequest) (*workspacev1.LtiLaunchRecord, error) {
	r, err := s.uc.Launches.Get(ctx, grpccall.Caller(ctx), req.GetId(), req.GetLaunchId())
	if err != nil {
		return nil, grpccall.Error(err)
	}
	roles := r.Roles
	if roles == nil {
		roles = []string{}
	}
	return &workspacev1.LtiLaunchRecord{
		LaunchId:       r.ID,
		RegistrationId: r.RegistrationID,
		DeploymentId:   r.DeploymentID,
		ContextId:      r.ContextID,
		ResourceLinkId: r.ResourceLinkID,
		Sub:            r.Subject,
		Email:          r.Email,
		Roles:          roles,
		Ags: &workspacev1.LtiLaunchRecordAgs{
			LineItem: r.Services.LineItem, LineItems: r.Services.LineItems, Scopes: r.Services.Scopes,
		},
		Nrps:       &workspacev1.LtiLaunchRecordNrps{MembershipsUrl: r.Services.MembershipsURL},
		LaunchTime: apitime.Format(r.LaunchedAt),
	}, nil
}
