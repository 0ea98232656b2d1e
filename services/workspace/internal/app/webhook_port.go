package app

import (
	"context"

	"github.com/liveproctor/workspaces/services/workspace/internal/domain"
)

// WebhookPort is the workspace side of the webhook context's port
// (webhookapp.Workspaces): the tenancy rule of key pairs, which endpoints
// follow, and the write path with its events. Like LTIPort it is a type of
// its own, so the workspace application's surface names nothing of
// webhooks.
type WebhookPort struct{ a *App }

// NewWebhookPort returns the port the webhook use cases reach a's
// workspaces through.
func NewWebhookPort(a *App) WebhookPort { return WebhookPort{a: a} }

// Managed is the rule of a workspace's key pairs, which its endpoints
// follow: its own, or one it manages.
func (p WebhookPort) Managed(ctx context.Context, caller domain.Caller, id string) (*domain.Workspace, error) {
	return p.a.keyManaged(ctx, caller, id)
}

// Get reads workspace id, deleted or not.
func (p WebhookPort) Get(ctx context.Context, id string) (*domain.Workspace, error) {
	return p.a.repo.Get(ctx, id)
}

// Write is App.write without a precondition, by actor in requestID.
func (p WebhookPort) Write(ctx context.Context, actor domain.Actor, requestID string, current *domain.Workspace,
	read func() (*domain.Workspace, error), apply func(*domain.Workspace) (bool, error)) error {
	if current != nil {
		read = readFirst(current, read)
	}
	_, err := p.a.write(ctx, author{actor: actor, requestID: requestID}, read, Precondition{}, apply)
	return err
}
