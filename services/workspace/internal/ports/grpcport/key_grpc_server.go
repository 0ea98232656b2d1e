package grpcport

import (
	"context"
	"time"

	"google.golang.org/protobuf/types/known/wrapperspb"

	"github.com/liveproctor/workspaces/pkg/apitime"
	"github.com/liveproctor/workspaces/pkg/fault"
	workspacev1 "github.com/liveproctor/workspaces/pkg/gen/workspace/v1"
	"github.com/liveproctor/workspaces/services/workspace/internal/app"
	"github.com/liveproctor/workspaces/services/workspace/internal/domain"
	"github.com/liveproctor/workspaces/services/workspace/internal/ports/grpccall"
)

func (s *Server) CreateWorkspaceKey(ctx context.Context, req *workspacev1.CreateWorkspaceKeyRequest) (*workspacev1.KeyPair, error) {
	tags := make([]domain.Tag, len(req.GetTags()))
	for i, t := range req.GetTags() {
		tags[i] = domain.Tag{Key: t.GetKey(), Type: t.GetType(), Value: t.GetValue()}
	}
	res, err := s.app.CreateWorkspaceKey(ctx, grpccall.Caller(ctx), req.GetId(), domain.NewKey{Name: req.GetName(), Tags: tags})
	if err != nil {
		return nil, grpccall.Error(err)
	}
	return keyPairToProto(res.Key), nil
}

func (s *Server) RotateWorkspaceKey(ctx context.Context, req *workspacev1.RotateWorkspaceKeyRequest) (*workspacev1.RotateWorkspaceKeyResponse, error) {
	var expireAfter *time.Duration
	if d := req.GetExpireAfter(); d != nil {
		if err := d.CheckValid(); err != nil {
			return nil, grpccall.Error(fault.InvalidField("expireAfter", "must be a duration such as \"86400s\""))
		}
		v := d.AsDuration()
		expireAfter = &v
	}
	res, err := s.app.RotateWorkspaceKey(ctx, grpccall.Caller(ctx), req.GetId(), req.GetAppKey(), expireAfter)
	if err != nil {
		return nil, grpccall.Error(err)
	}
	return &workspacev1.RotateWorkspaceKeyResponse{Previous: keyPairToProto(res.Previous), Successor: keyPairToProto(res.Successor)}, nil
}

func (s *Server) RevokeWorkspaceKey(ctx context.Context, req *workspacev1.RevokeWorkspaceKeyRequest) (*workspacev1.KeyPair, error) {
	res, err := s.app.RevokeWorkspaceKey(ctx, grpccall.Caller(ctx), req.GetId(), req.GetAppKey())
	if err != nil {
		return nil, grpccall.Error(err)
	}
	return keyPairToProto(res.Revoked), nil
}

func keyPairToProto(k app.KeyPairView) *workspacev1.KeyPair {
	return &workspacev1.KeyPair{
		AppKey:      k.AppKey,
		AppSecret:   k.AppSecret,
		Name:        k.Name,
		CreateTime:  apitime.Format(k.CreatedAt),
		UpdateTime:  apitime.Format(k.UpdatedAt),
		ExpireTime:  timeOrNull(k.ExpiresAt),
		LastUseTime: timeOrNull(k.LastUsedAt),
		Tags:        tagsToProto(k.Tags),
	}
}

// timeOrNull is a time as the API writes it, or null (unset) when zero.
func timeOrNull(t time.Time) *wrapperspb.StringValue {
	if t.IsZero() {
		return nil
	}
	return wrapperspb.String(apitime.Format(t))
}
