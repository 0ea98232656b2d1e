package app

import (
	"context"

	"github.com/liveproctor/workspaces/services/workspace/internal/domain"
)

// PortalPort is the workspace side of the portal context's port
// (portalapp.Workspaces): the tenancy rule of key pairs, which portal links
// follow, the workspaces, and the audit trail. Like LTIPort it is a type
// of its own, so the workspace application's surface names nothing of the
// portal but the sessions its policy admits (call_policy.go).
type PortalPort struct{ a *App }

// NewPortalPort returns the port the portal's use cases reach a's
// workspaces through.
func NewPortalPort(a *App) PortalPort { return PortalPort{a: a} }

// Managed is the rule of a workspace's key pairs, which its portal links
// follow: its own, or one it manages (an administrator in the portal: its
// own only).
func (p PortalPort) Managed(ctx context.Context, caller domain.Caller, id string) (*domain.Workspace, error) {
	return p.a.keyManaged(ctx, caller, id)
}

// Get reads workspace id, deleted or not.
func (p PortalPort) Get(ctx context.Context, id string) (*domain.Workspace, error) {
	return p.a.repo.Get(ctx, id)
}

// AppendEvent records an event that rides on no workspace's write.
func (p PortalPort) AppendEvent(ctx context.Context, e domain.Event) error {
	return p.a.appendEvent(ctx, e)
}
