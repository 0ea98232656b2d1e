package app

import (
	"context"

	"github.com/liveproctor/workspaces/pkg/fault"
	"github.com/liveproctor/workspaces/services/workspace/internal/domain"
	portaldomain "github.com/liveproctor/workspaces/services/workspace/internal/portal/domain"
)

var errNotInPortal = fault.New(fault.PermissionDenied, "only a portal session has a portal session to read")

// Session returns the link whose session the caller, an administrator in
// the portal the policy admitted, presents: its workspace, its end, its
// way back. A session revoked since the policy admitted the call is over.
func (p *Portal) Session(ctx context.Context, caller domain.Caller) (portaldomain.Link, error) {
	if !caller.InPortal() {
		return portaldomain.Link{}, errNotInPortal
	}
	l, ok, err := p.store.Link(ctx, caller.PortalLinkID)
	if err != nil || !ok {
		return portaldomain.Link{}, sessionError(err)
	}
	if l.Revoked() || !p.s.Now().Before(l.SessionEnd()) {
		return portaldomain.Link{}, portaldomain.ErrSessionOver
	}
	return l, nil
}
