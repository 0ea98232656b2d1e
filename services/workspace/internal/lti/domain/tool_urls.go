package domain

import (
	"net/url"
	"strings"
)

// ToolURLs are the URLs the tool hands to LMSs: every one below the public
// base URL (PUBLIC_BASE_URL), on the routes the gateway serves, and built
// here alone, so that a workspace's create result, its configuration XML
// and a Dynamic Registration cannot disagree.
type ToolURLs struct{ base string }

// NewToolURLs returns the URLs below base. A base written with a trailing
// slash (https://lti.example.com/) does not double it.
func NewToolURLs(base string) ToolURLs { return ToolURLs{base: strings.TrimRight(base, "/")} }

// Domain is the host name of every URL, without a port (empty when the
// base does not parse): Canvas matches it against the host of the URLs it
// launches.
func (u ToolURLs) Domain() string {
	parsed, err := url.Parse(u.base)
	if err != nil {
		return ""
	}
	return parsed.Hostname()
}

// LTI11Launch is where an LMS sends the LTI 1.1 launches of every workspace
// (the consumer key tells them apart).
func (u ToolURLs) LTI11Launch() string { return u.base + "/lti/v1/launch" }

// LTI11Configuration is where an LMS reads a workspace's configuration XML.
func (u ToolURLs) LTI11Configuration(workspaceID string) string {
	return u.base + "/lti/v1/workspaces/" + url.PathEscape(workspaceID) + "/config.xml"
}

// CanvasConfiguration is where a Canvas administrator's developer key reads
// a workspace's LTI 1.3 configuration JSON.
func (u ToolURLs) CanvasConfiguration(workspaceID string) string {
	return u.base + "/lti/v1p3/workspaces/" + url.PathEscape(workspaceID) + "/canvas.json"
}

// LTI13Launch is the LTI 1.3 launch URL: the redirect URI registered with
// platforms and the target link of every launch.
func (u ToolURLs) LTI13Launch() string { return u.base + "/lti/v1p3/launch" }

// LTI13Login is the OIDC login initiation URL platforms are given.
func (u ToolURLs) LTI13Login() string { return u.base + "/lti/v1p3/login" }

// LTI13JWKS is where platforms read the tool's public keys.
func (u ToolURLs) LTI13JWKS() string { return u.base + "/lti/v1p3/jwks.json" }

// RegistrationLink is the Dynamic Registration link of secret, its last
// segment.
func (u ToolURLs) RegistrationLink(secret string) string {
	return u.base + "/lti/v1p3/register/" + secret
}
