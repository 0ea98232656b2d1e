// Package grpccall is what the workspace service's gRPC ports (the
// workspace's, the LTI context's and the webhooks', answering one
// WorkspaceService) share about a call: the caller the auth interceptor
// admitted, the API's names for the fields an error names, and which
// fields an update request changes.
package grpccall

import (
	"context"

	"github.com/liveproctor/workspaces/pkg/grpcmw"
	"github.com/liveproctor/workspaces/services/workspace/internal/domain"
)

type callerKey struct{}

// WithCaller is ctx carrying the caller the policy admitted.
func WithCaller(ctx context.Context, c domain.Caller) context.Context {
	return context.WithValue(ctx, callerKey{}, c)
}

// Caller returns the caller WithCaller put in ctx, with the request's id
// (the events of its changes carry it).
func Caller(ctx context.Context) domain.Caller {
	c, _ := ctx.Value(callerKey{}).(domain.Caller)
	c.RequestID = grpcmw.RequestID(ctx)
	return c
}
