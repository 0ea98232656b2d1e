package app

import (
	"context"

	"github.com/liveproctor/workspaces/pkg/fault"
	"github.com/liveproctor/workspaces/services/workspace/internal/domain"
	portaldomain "github.com/liveproctor/workspaces/services/workspace/internal/portal/domain"
)

var errNotInPortal = fault.New(fault.PermissionDenied, "only a portal session has a portal session to read")

// SessionView is a session as its pages show it: the link that started it,
// and its workspace's name.
type SessionView struct {
	Link          portaldomain.Link
	WorkspaceName string
}

// Session returns the link whose session the caller, an administrator in
// the portal the policy admitted, presents (its workspace, its end, its
// way back), with the workspace's name. A session revoked since the policy
// admitted the call is over; a workspace deleted since is not found.
func (p *Portal) Session(ctx context.Context, caller domain.Caller) (SessionView, error) {
	if !caller.InPortal() {
		return SessionView{}, errNotInPortal
	}
	l, ok, err := p.store.Link(ctx, caller.PortalLinkID)
	if err != nil || !ok {
		return SessionView{}, sessionError(err)
	}
	if l.Revoked() || !p.s.Now().Before(l.SessionEnd()) {
		return SessionView{}, portaldomain.ErrSessionOver
	}
	w, err := p.ws.Managed(ctx, caller, l.WorkspaceID)
	if err != nil {
		return SessionView{}, err
	}
	return SessionView{Link: l, WorkspaceName: w.Name()}, nil
}
