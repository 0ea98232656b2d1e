package app

import (
	"context"
	"errors"
	"fmt"

	"github.com/liveproctor/workspaces/pkg/fault"
	"github.com/liveproctor/workspaces/pkg/ident"
	"github.com/liveproctor/workspaces/services/workspace/internal/domain"
	portaldomain "github.com/liveproctor/workspaces/services/workspace/internal/portal/domain"
)

// Opened is a link just opened: the token of the session it started (a
// secret: the gateway keeps it in the portal's cookie), and the link.
type Opened struct {
	Token string
	Link  portaldomain.Link
}

// OpenLink spends the link secret finds and starts its session, in the
// request requestID. Of openings of one link at once (on any replica),
// one gets it; the others, and the openings of a link unknown, spent,
// revoked, expired, or whose workspace was deleted since it was made, are
// portaldomain.ErrLinkUnusable. The opening is in the audit trail, by the
// portal's actor; a session whose opening could not be recorded is ended
// and the call answered unavailable (the administrator asks for a new
// link).
func (p *Portal) OpenLink(ctx context.Context, secret, requestID string) (Opened, error) {
	if !ident.IsSecret(secret) {
		return Opened{}, portaldomain.ErrLinkUnusable
	}
	id, ok, err := p.store.Spend(ctx, secret)
	if err != nil || !ok {
		return Opened{}, unusable(err)
	}
	l, ok, err := p.store.Link(ctx, id)
	if err != nil || !ok {
		return Opened{}, unusable(err)
	}
	w, err := p.ws.Get(ctx, l.WorkspaceID)
	switch {
	case errors.Is(err, domain.ErrNotFound):
		return Opened{}, portaldomain.ErrLinkUnusable
	case err != nil:
		return Opened{}, fmt.Errorf("get the portal link's workspace: %w", err)
	case !l.Current(!w.Deleted(), w.TokenCutoff()):
		return Opened{}, portaldomain.ErrLinkUnusable
	}
	token, now := ident.NewSecret(), p.s.timestamp()
	// The token finds the link first; the link's opening, next, is what
	// makes the session good, so a revocation in between is never lost.
	if err := p.store.StartSession(ctx, token, id, now.Add(portaldomain.SessionTTL)); err != nil {
		return Opened{}, err
	}
	l, ok, err = p.store.Update(ctx, id, func(l *portaldomain.Link) (bool, error) {
		return true, l.Open(portaldomain.Digest(token), now)
	})
	if err != nil || !ok {
		return Opened{}, unusable(err)
	}
	actor := domain.Actor{WorkspaceID: w.ID(), PortalLinkID: l.ID}
	if err := p.ws.AppendEvent(ctx, linkEvent(domain.EventPortalLinkOpened, w, actor, l.ID, requestID, now)); err != nil {
		p.endSession(ctx, l)
		return Opened{}, fault.Wrap(fault.Unavailable, fmt.Errorf("record a portal link's opening: %w", err),
			"the portal could not record this link's opening in the audit trail, so no session was started: ask for a new link")
	}
	return Opened{Token: token, Link: l}, nil
}

// unusable is a lookup's failure, or, when there is none, the link
// unusable.
func unusable(err error) error {
	if err != nil {
		return err
	}
	return portaldomain.ErrLinkUnusable
}

// endSession revokes l, whose opening could not be recorded, so that its
// session grants nothing. A failure is logged: the session then lasts its
// hour unrecorded.
func (p *Portal) endSession(ctx context.Context, l portaldomain.Link) {
	now := p.s.timestamp()
	_, _, err := p.store.Update(context.WithoutCancel(ctx), l.ID, func(l *portaldomain.Link) (bool, error) {
		return l.Revoke(now), nil
	})
	if err != nil {
		p.s.Logger.Error("a portal session whose opening is not in the audit trail could not be ended",
			"link", l.ID, "workspace", l.WorkspaceID, "error", err.Error())
	}
}
