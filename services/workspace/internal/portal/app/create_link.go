package app

import (
	"context"
	"fmt"
	"time"

	"github.com/liveproctor/workspaces/pkg/fault"
	"github.com/liveproctor/workspaces/pkg/ident"
	"github.com/liveproctor/workspaces/services/workspace/internal/domain"
	portaldomain "github.com/liveproctor/workspaces/services/workspace/internal/portal/domain"
)

// NewLink is a link just made: its id, the URL to send (a secret until it
// is opened or expires), and when it expires.
type NewLink struct {
	ID        string
	URL       string
	ExpiresAt time.Time
}

// CreateLink makes a link to the portal of the workspace id, which the
// caller must own or manage, whose way back is returnURL (empty: none).
// The link's making is in the audit trail; a link whose event could not
// be recorded is withdrawn and the call answered unavailable.
func (p *Portal) CreateLink(ctx context.Context, caller domain.Caller, id, returnURL string) (NewLink, error) {
	w, err := p.ws.Managed(ctx, caller, id)
	if err != nil {
		return NewLink{}, err
	}
	now := p.s.timestamp()
	made, err := p.store.CountMade(ctx, w.ID(), portaldomain.Window(now))
	if err != nil {
		return NewLink{}, err
	}
	if made > portaldomain.LinksPerWindow {
		return NewLink{}, portaldomain.ErrTooManyLinks(now)
	}
	l, err := portaldomain.NewLink(ident.NewUUID(), w.ID(), returnURL, w.TokenCutoff(), now)
	if err != nil {
		return NewLink{}, err
	}
	secret := ident.NewSecret()
	if err := p.store.Add(ctx, l, secret); err != nil {
		return NewLink{}, err
	}
	e := linkEvent(domain.EventPortalLinkCreated, w, caller.Actor(), l.ID, caller.RequestID, now)
	if err := p.ws.AppendEvent(ctx, e); err != nil {
		_, _, _ = p.store.Spend(context.WithoutCancel(ctx), secret)
		return NewLink{}, fault.Wrap(fault.Unavailable, fmt.Errorf("record a portal link: %w", err),
			"the portal link's audit event could not be recorded, so no link was made; retry shortly")
	}
	return NewLink{ID: l.ID, URL: portaldomain.OpenURL(p.s.BaseURL, secret), ExpiresAt: l.ExpiresAt}, nil
}
