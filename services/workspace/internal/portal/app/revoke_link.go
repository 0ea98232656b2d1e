package app

import (
	"context"
	"errors"
	"fmt"

	"github.com/liveproctor/workspaces/pkg/fault"
	"github.com/liveproctor/workspaces/services/workspace/internal/domain"
	portaldomain "github.com/liveproctor/workspaces/services/workspace/internal/portal/domain"
)

// errOthersLink: in the portal, a session revokes its own link (signing
// out), no other.
var errOthersLink = fault.New(fault.PermissionDenied,
	"a portal session may revoke its own link only (signing out); revoke others with a key pair")

// errNotThisWorkspace: the link is another workspace's (answered as not
// found).
var errNotThisWorkspace = errors.New("the link is another workspace's")

// RevokeLink ends the link linkID of the workspace id, which the caller
// must own or manage: an unused link can no longer be opened, and the
// session an opened one started is over. Revoking it again answers the
// same while the store remembers the link; a link it does not, or another
// workspace's, is not found. The revocation is in the audit trail once,
// recorded again by a repeated revocation if it could not be the first
// time.
func (p *Portal) RevokeLink(ctx context.Context, caller domain.Caller, id, linkID string) (portaldomain.Link, error) {
	w, err := p.ws.Managed(ctx, caller, id)
	if err != nil {
		return portaldomain.Link{}, err
	}
	if caller.InPortal() && linkID != caller.PortalLinkID {
		return portaldomain.Link{}, errOthersLink
	}
	if !portaldomain.IsLinkID(linkID) {
		return portaldomain.Link{}, linkNotFound(linkID)
	}
	now := p.s.timestamp()
	l, ok, err := p.store.Update(ctx, linkID, func(l *portaldomain.Link) (bool, error) {
		if l.WorkspaceID != w.ID() {
			return false, errNotThisWorkspace
		}
		return l.Revoke(now), nil
	})
	switch {
	case errors.Is(err, errNotThisWorkspace) || err == nil && !ok:
		return portaldomain.Link{}, linkNotFound(linkID)
	case err != nil:
		return portaldomain.Link{}, err
	}
	e := linkEvent(domain.EventPortalLinkRevoked, w, caller.Actor(), l.ID, caller.RequestID, l.RevokedAt)
	if err := p.ws.AppendEvent(ctx, e); err != nil {
		return portaldomain.Link{}, fault.Wrap(fault.Unavailable, fmt.Errorf("record a portal link's revocation: %w", err),
			"the portal link is revoked (its session is over), but the revocation's audit event could not be recorded yet: revoke it again shortly")
	}
	return l, nil
}
