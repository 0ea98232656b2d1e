package portal

import (
	"net/http"

	workspacev1 "github.com/liveproctor/workspaces/pkg/gen/workspace/v1"
)

// field is a value an administrator copies into an LMS: a read-only input
// (selectable without a script) with a copy button.
type field struct {
	ID, Label, Value string
	// Help says where the value goes; may be empty.
	Help string
}

// lti13View is the LTI 1.3 set-up page.
type lti13View struct {
	Fields []field
	// CanvasJSON is the workspace's Canvas developer-key JSON URL.
	CanvasJSON string
	// Link is a Dynamic Registration link just made, nil on a GET;
	// LinkExpires its end.
	Link        *field
	LinkExpires string
}

// lti13 shows every value an LMS asks for to add the tool, from the
// workspace service, which builds every URL handed to an LMS.
func (p *portal) lti13(w http.ResponseWriter, r *http.Request, s *session) {
	p.showLTI13(w, r, s, nil)
}

// makeRegistrationLink makes a Dynamic Registration link and shows it on
// the set-up page, once: it is a secret until used, so it is answered
// rather than put in a redirect's address.
func (p *portal) makeRegistrationLink(w http.ResponseWriter, r *http.Request, s *session) {
	link, err := p.service.CreateLtiRegistrationLink(r.Context(), &workspacev1.CreateLtiRegistrationLinkRequest{Id: s.id()})
	if err != nil {
		p.fail(w, r, s, err, "/portal/lti13")
		return
	}
	p.showLTI13(w, r, s, link)
}

func (p *portal) showLTI13(w http.ResponseWriter, r *http.Request, s *session, link *workspacev1.LtiRegistrationLink) {
	c, err := p.service.GetLtiConfiguration(r.Context(), &workspacev1.GetLtiConfigurationRequest{WorkspaceId: s.id()})
	if err != nil {
		p.fail(w, r, s, err, "")
		return
	}
	canvas := c.GetCanvasConfigurationUrl()
	v := lti13View{CanvasJSON: canvas, Fields: []field{
		{ID: "login-url", Label: "Login URL", Value: c.GetLti13LoginUrl(),
			Help: "Also called the OpenID Connect (OIDC) login initiation URL, or Initiate login URL."},
		{ID: "redirect-uri", Label: "Redirect URI", Value: c.GetLti13LaunchUrl(),
			Help: "Also called the redirection URI(s) or redirect URLs."},
		{ID: "target-link-uri", Label: "Target link URI", Value: c.GetLti13LaunchUrl(),
			Help: "Also called the launch URL or tool URL."},
		{ID: "jwks-url", Label: "JWKS URL", Value: c.GetLti13JwksUrl(),
			Help: "The tool's public keys: also called the public keyset URL or public JWK URL."},
		{ID: "deep-linking-url", Label: "Deep linking URL", Value: c.GetLti13LaunchUrl(),
			Help: "Also called the content selection URL: where teachers pick the exam a link opens."},
		{ID: "domain", Label: "Domain", Value: c.GetDomain(), Help: "The tool's domain, where an LMS asks for one."},
	}}
	if link != nil {
		v.Link = &field{ID: "registration-link", Label: "Dynamic Registration link", Value: link.GetUrl(),
			Help: "Paste it only into your LMS: until it is used, whoever holds it can connect a platform to this workspace."}
		v.LinkExpires = link.GetExpireTime()
	}
	if canvas != "" {
		v.Fields = append(v.Fields, field{ID: "canvas-json-url", Label: "Canvas JSON URL", Value: canvas,
			Help: "For Canvas's developer key, method Enter URL: every value above in one document."})
	}
	p.render(w, r, http.StatusOK, "lti13", newView(r, s, "LTI 1.3 set-up", "lti13", v))
}
