package grpcport

import (
	"context"

	"github.com/liveproctor/workspaces/pkg/apitime"
	workspacev1 "github.com/liveproctor/workspaces/pkg/gen/workspace/v1"
	ltidomain "github.com/liveproctor/workspaces/services/workspace/internal/lti/domain"
	"github.com/liveproctor/workspaces/services/workspace/internal/ports/grpccall"
)

func (s *Server) SubmitLtiScore(ctx context.Context, req *workspacev1.SubmitLtiScoreRequest) (*workspacev1.LtiScoreReceipt, error) {
	r, err := s.uc.Grades.Submit(ctx, grpccall.Caller(ctx), req.GetId(), req.GetLaunchId(), ltidomain.ScoreInput{
		ScoreGiven: req.ScoreGiven, ScoreMaximum: req.ScoreMaximum,
		ActivityProgress: req.GetActivityProgress(), GradingProgress: req.GetGradingProgress(),
		Comment: req.GetComment(), SubmittedAt: req.GetSubmittedAt(),
	})
	if err != nil {
		return nil, grpccall.Error(err)
	}
	return &workspacev1.LtiScoreReceipt{Id: r.ID, Status: string(r.Status)}, nil
}

func (s *Server) GetLtiScore(ctx context.Context, req *workspacev1.GetLtiScoreRequest) (*workspacev1.LtiScore, error) {
	r, err := s.uc.Grades.Get(ctx, grpccall.Caller(ctx), req.GetId(), req.GetScoreId())
	if err != nil {
		return nil, grpccall.Error(err)
	}
	out := &workspacev1.LtiScore{
		Id: r.ID, LaunchId: r.LaunchID, Status: string(r.Status), Attempts: int32(r.Attempts), UpdateTime: apitime.Format(r.UpdatedAt),
	}
	if r.Reason != "" {
		out.Reason = &r.Reason
	}
	return out, nil
}
