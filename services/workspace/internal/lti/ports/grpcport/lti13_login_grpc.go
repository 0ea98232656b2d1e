package grpcport

import (
	"context"
	"time"

	workspacev1 "github.com/liveproctor/workspaces/pkg/gen/workspace/v1"
	"github.com/liveproctor/workspaces/pkg/grpcmw"
	ltidomain "github.com/liveproctor/workspaces/services/workspace/internal/lti/domain"
	"github.com/liveproctor/workspaces/services/workspace/internal/ports/grpccall"
)

// StartLti13Login answers anyone: an LMS user's browser starts the login
// through the gateway, and the app's policy (app.Admit) asks no
// credentials of it.
func (s *Server) StartLti13Login(ctx context.Context, req *workspacev1.StartLti13LoginRequest) (*workspacev1.Lti13LoginRedirect, error) {
	r, err := s.uc.LTI13Logins.Start(ctx, grpcmw.RequestID(ctx), ltidomain.LTI13LoginInitiation{
		Issuer:         req.GetIssuer(),
		LoginHint:      req.GetLoginHint(),
		TargetLinkURI:  req.GetTargetLinkUri(),
		LTIMessageHint: req.GetLtiMessageHint(),
		ClientID:       req.GetClientId(),
		DeploymentID:   req.GetLtiDeploymentId(),
		StorageTarget:  req.GetLtiStorageTarget(),
	})
	if err != nil {
		return nil, grpccall.Error(err)
	}
	return &workspacev1.Lti13LoginRedirect{
		RedirectUrl: r.URL, State: r.State, StateTtlSeconds: int32(r.StateTTL / time.Second),
		Nonce: r.Nonce, LtiStorageTarget: r.StorageTarget, PlatformOrigin: r.PlatformOrigin,
	}, nil
}
