// Package authclient asks the auth service to revoke deleted workspaces'
// tokens.
package authclient

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	"github.com/liveproctor/workspaces/pkg/basicauth"
	authv1 "github.com/liveproctor/workspaces/pkg/gen/auth/v1"
)

// Settings tune the retries.
type Settings struct {
	// CallTimeout bounds one attempt.
	CallTimeout time.Duration
	// GiveUpAfter bounds how long a revocation is retried.
	GiveUpAfter time.Duration
	// FirstRetry is the wait after the first failure; it doubles up to
	// MaxRetryWait.
	FirstRetry   time.Duration
	MaxRetryWait time.Duration
}

// Revoker asks the auth service to revoke a deleted workspace's tokens,
// retrying in the background until it succeeds or gives up.
//
// It is cleanup, not the safety net: the auth service refuses tokens whose
// workspace is deleted, or was deleted after they were issued, whether or
// not this call got through.
type Revoker struct {
	client        authv1.AuthServiceClient
	authorization string
	settings      Settings
	logger        *slog.Logger

	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup
}

// New returns a Revoker calling the auth service over conn with the given
// service key pair.
func New(conn grpc.ClientConnInterface, appKey, appSecret string, settings Settings, logger *slog.Logger) *Revoker {
	ctx, cancel := context.WithCancel(context.Background())
	return &Revoker{
		client:        authv1.NewAuthServiceClient(conn),
		authorization: basicauth.Header(appKey, appSecret),
		settings:      settings,
		logger:        logger,
		ctx:           ctx,
		cancel:        cancel,
	}
}

// RevokeWorkspaceTokens tries once, so that in the usual case the tokens
// are gone when the delete answers, and if that fails keeps trying in the
// background.
// The auth service records the revocation in the workspace's audit trail,
// with requestID (the delete's) as its request id.
func (r *Revoker) RevokeWorkspaceTokens(workspaceID, requestID string) {
	err := r.attempt(workspaceID, requestID)
	if err == nil {
		return
	}
	r.wg.Add(1)
	go func() {
		defer r.wg.Done()
		r.retry(workspaceID, requestID, err)
	}()
}

// retry goes on after a first failed attempt.
func (r *Revoker) retry(workspaceID, requestID string, err error) {
	deadline := time.Now().Add(r.settings.GiveUpAfter)
	wait := r.settings.FirstRetry
	for attempt := 1; ; attempt++ {
		if attempt > 1 {
			err = r.attempt(workspaceID, requestID)
		}
		if err == nil {
			if attempt > 1 {
				r.logger.Info("revoked the tokens of a deleted workspace", "workspace_id", workspaceID, "attempts", attempt)
			}
			return
		}
		switch status.Code(err) {
		case codes.Unauthenticated, codes.PermissionDenied, codes.NotFound, codes.InvalidArgument:
			// Retrying will not help: the configuration is wrong.
			r.logger.Error("the auth service refused to revoke a deleted workspace's tokens; check SERVICE_APP_KEY",
				"workspace_id", workspaceID, "error", err.Error())
			return
		}
		if time.Now().Add(wait).After(deadline) {
			r.logger.Error("gave up revoking the tokens of a deleted workspace (they are refused anyway)",
				"workspace_id", workspaceID, "attempts", attempt, "error", err.Error())
			return
		}
		r.logger.Warn("revoking a deleted workspace's tokens failed, retrying",
			"workspace_id", workspaceID, "attempt", attempt, "retry_in", wait, "error", err.Error())
		select {
		case <-r.ctx.Done():
			return
		case <-time.After(wait):
		}
		wait = min(2*wait, r.settings.MaxRetryWait)
	}
}

func (r *Revoker) attempt(workspaceID, requestID string) error {
	ctx, cancel := context.WithTimeout(r.ctx, r.settings.CallTimeout)
	defer cancel()
	ctx = metadata.AppendToOutgoingContext(ctx, "authorization", r.authorization)
	if requestID != "" {
		ctx = metadata.AppendToOutgoingContext(ctx, "x-request-id", requestID)
	}
	_, err := r.client.RevokeWorkspaceSdkTokens(ctx, &authv1.RevokeWorkspaceSdkTokensRequest{WorkspaceId: workspaceID})
	return err
}

// Close stops retrying and waits for the background work to end.
func (r *Revoker) Close() {
	r.cancel()
	r.wg.Wait()
}
