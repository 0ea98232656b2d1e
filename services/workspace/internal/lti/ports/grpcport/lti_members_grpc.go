package grpcport

import (
	"context"

	workspacev1 "github.com/liveproctor/workspaces/pkg/gen/workspace/v1"
	ltiapp "github.com/liveproctor/workspaces/services/workspace/internal/lti/app"
	"github.com/liveproctor/workspaces/services/workspace/internal/ports/grpccall"
)

func (s *Server) ListLtiLaunchMembers(ctx context.Context, req *workspacev1.ListLtiLaunchMembersRequest) (*workspacev1.ListLtiLaunchMembersResponse, error) {
	members, next, err := s.uc.Roster.Members(ctx, grpccall.Caller(ctx), req.GetId(), req.GetLaunchId(), ltiapp.MembersQuery{
		Role: req.GetRole(), PageSize: int(req.GetPageSize()), PageToken: req.GetPageToken(),
	})
	if err != nil {
		return nil, grpccall.Error(err)
	}
	out := &workspacev1.ListLtiLaunchMembersResponse{Members: make([]*workspacev1.LtiMember, 0, len(members)), NextPageToken: next}
	for _, m := range members {
		roles := m.Roles
		if roles == nil {
			roles = []string{}
		}
		out.Members = append(out.Members, &workspacev1.LtiMember{
			UserId: m.UserID, Name: m.Name, Email: m.Email, Roles: roles, Status: m.Status,
		})
	}
	return out, nil
}
