package app

import (
	"context"
	"errors"
	"fmt"

	"github.com/liveproctor/workspaces/pkg/fault"
	"github.com/liveproctor/workspaces/services/workspace/internal/domain"
)

// SessionRevocation is a revocation of SDK sessions the auth service made:
// every session of User in the workspace, or of the whole workspace when
// User is empty. ActorAppKey is the key pair that asked the auth service.
type SessionRevocation struct {
	WorkspaceID string
	User        string
	ActorAppKey string
}

var errRecordCaller = fault.New(fault.PermissionDenied,
	"only the root workspace's key pairs may record session revocations (the auth service does)")

var errRecordNeedsActor = fault.InvalidField("actorAppKey", "is required")

// RecordSessionRevocation adds a revocation the auth service already made
// to the audit trail. Only the root workspace's key pairs may call it (the
// auth service presents its own). The revocation happened elsewhere, so
// there is no workspace write to ride on: the event is stored straight into
// the audit trail; if that fails the answer is Unavailable and the auth
// service answers its caller so (a revocation is safe to repeat).
func (a *App) RecordSessionRevocation(ctx context.Context, caller domain.Caller, in SessionRevocation) error {
	if !a.isRoot(caller) {
		return errRecordCaller
	}
	if in.ActorAppKey == "" {
		return errRecordNeedsActor
	}
	w, err := a.load(ctx, in.WorkspaceID)
	if err != nil {
		return err
	}
	actor := domain.Actor{AppKey: in.ActorAppKey}
	switch owner, err := a.repo.GetByAppKey(ctx, in.ActorAppKey); {
	case err == nil:
		actor.WorkspaceID = owner.ID()
	case !errors.Is(err, domain.ErrNotFound):
		return fmt.Errorf("find the actor's workspace: %w", err)
	}
	e := domain.NewEvent(domain.EventWorkspaceSessionsRevoked, w, actor,
		domain.Target{Type: domain.TargetWorkspace, ID: w.ID()}, caller.RequestID, a.timestamp())
	if in.User != "" {
		e = domain.NewEvent(domain.EventUserSessionsRevoked, w, actor,
			domain.Target{Type: domain.TargetUser, ID: in.User}, caller.RequestID, a.timestamp())
	}
	if err := a.appendEvent(ctx, e); err != nil {
		return fault.Wrap(fault.Unavailable, fmt.Errorf("record a session revocation: %w", err),
			"the revocation was made but its audit event could not be recorded; retry shortly")
	}
	return nil
}
