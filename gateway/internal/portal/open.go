package portal

import (
	"net/http"
	"time"

	"google.golang.org/grpc/metadata"

	"github.com/liveproctor/workspaces/gateway/internal/httperr"
	"github.com/liveproctor/workspaces/gateway/internal/reqstate"
	"github.com/liveproctor/workspaces/pkg/fault"
	workspacev1 "github.com/liveproctor/workspaces/pkg/gen/workspace/v1"
)

// adviceNewLink is what to do about a link that cannot open the portal.
const adviceNewLink = "Ask your vendor for a new link: a link opens the portal once, within 5 minutes of being made."

// openView is the page a link opens on.
type openView struct {
	// Action is the link's own path, where the button posts.
	Action string
}

// openPage answers a link's GET with a page whose one button opens the
// portal. It spends nothing and calls nothing: mail scanners and chat
// previews fetch the links they see, and must not use them up.
func (p *portal) openPage(w http.ResponseWriter, r *http.Request) {
	p.render(w, r, http.StatusOK, "open", newView(r, nil, "Open the administrator's portal", "", openView{Action: r.URL.Path}))
}

// open spends the link and starts the session: its token goes into the
// cookie, and the browser on to the portal's home. The form can carry no
// CSRF token yet, so only its origin is checked.
func (p *portal) open(w http.ResponseWriter, r *http.Request) {
	if !sameOrigin(r) {
		p.forbidden(w, r)
		return
	}
	ctx := metadata.NewOutgoingContext(r.Context(), p.md(r.Context(), r))
	s, err := p.service.OpenPortalLink(ctx, &workspacev1.OpenPortalLinkRequest{Secret: r.PathValue("secret")})
	if err != nil {
		a, heading := p.answer(r, err)
		f := refusal{Message: a.Message}
		if a.Status == http.StatusUnauthorized {
			heading, f.Advice = headingLinkFailed, adviceNewLink
		}
		p.refusePageWith(w, r, nil, a, heading, f)
		return
	}
	ends, err := time.Parse(time.RFC3339Nano, s.GetExpireTime())
	if err != nil {
		p.logger.Error("a portal session's end is not a time", "request_id", reqstate.ID(r.Context()), "error", err)
		p.refusePage(w, r, nil, httperr.New(fault.Internal, msgOurSide, "", 0), headingOurSide, "")
		return
	}
	http.SetCookie(w, sessionCookie(s.GetToken(), ends))
	http.Redirect(w, r, Root, http.StatusSeeOther)
}

// overview is the portal's home: the workspace, and where to go.
func (p *portal) overview(w http.ResponseWriter, r *http.Request, s *session) {
	p.render(w, r, http.StatusOK, "overview", newView(r, s, "Administrator's portal", "overview", nil))
}

// signedOutView is the page after signing out.
type signedOutView struct {
	ReturnURL string
}

// signOut ends the session: the link is revoked, which the workspace
// service records as the administrator's doing, and the cookie goes.
func (p *portal) signOut(w http.ResponseWriter, r *http.Request, s *session) {
	_, err := p.service.RevokePortalLink(r.Context(), &workspacev1.RevokePortalLinkRequest{Id: s.id(), LinkId: s.info.GetLinkId()})
	if err != nil {
		p.fail(w, r, s, err, Root)
		return
	}
	clearCookie(w)
	p.render(w, r, http.StatusOK, "signed_out", newView(r, nil, "You are signed out", "", signedOutView{ReturnURL: s.info.GetReturnUrl()}))
}
