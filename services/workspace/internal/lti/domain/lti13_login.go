package domain

import (
	"fmt"
	"net/url"
	"strings"

	"github.com/liveproctor/workspaces/pkg/fault"
	"github.com/liveproctor/workspaces/pkg/ltistorage"
)

// The OIDC login initiation of an LTI 1.3 launch (1EdTech Security
// Framework 1.0 §5.1.1; LTI Core 1.3 §4.1): the platform sends the
// browser to the tool's login URL with its issuer and hints, and the tool
// sends it back to the platform's authorization endpoint with an
// authentication request whose state and nonce the launch then checks.

// MaxLTI13LoginParam bounds each parameter of a login initiation, in
// bytes: a login_hint or lti_message_hint is an opaque handle of the
// platform's, and the URLs follow the registration's 2048-byte bound.
const MaxLTI13LoginParam = 2048

// LTI13LoginInitiation is a login initiation's parameters as the platform
// sent them; the optional ones are empty when not sent.
type LTI13LoginInitiation struct {
	Issuer         string // iss: compared as an exact string
	LoginHint      string // login_hint
	TargetLinkURI  string // target_link_uri: the tool's launch URL
	LTIMessageHint string // lti_message_hint: echoed unaltered
	ClientID       string // client_id: which registration of the issuer
	DeploymentID   string // lti_deployment_id: checked against the registration
	// StorageTarget is lti_storage_target: the frame of the platform's
	// client-side postMessage storage (1EdTech), where the login keeps
	// its state and nonce instead of a cookie.
	StorageTarget string
}

// MaxLTI13StorageTarget bounds lti_storage_target: a frame's name
// (`_parent`, Canvas's `post_message_forwarding`), which the login page
// looks up and the state carries.
const MaxLTI13StorageTarget = ltistorage.MaxTarget

// Refusals of a login initiation the platform's administrator can act on.
var (
	// ErrLTI13LoginRegistration: no registration of this tool has the
	// login's issuer and client_id, or, without client_id, the issuer and
	// the deployment the login names; a deleted workspace's registrations
	// are none.
	ErrLTI13LoginRegistration = fault.New(fault.Unauthenticated,
		"no registration of this tool matches the login's iss and client_id (or, without client_id, its iss and lti_deployment_id): "+
			"register the platform (its issuer, client id and deployment ids) with the workspace first, or check that the LMS sends "+
			"the issuer registered, character for character")
	// ErrLTI13LoginDeployment: the login named a deployment the
	// registration does not list.
	ErrLTI13LoginDeployment = fault.New(fault.Unauthenticated,
		"the login's lti_deployment_id is not one of the registration's deployment ids: add it to the registration")
	// ErrLTI13LoginTarget: the login's target_link_uri is not the tool's
	// launch URL (the refusal names it): the LMS's tool is set up with
	// another. Every other parameter passed its checks, so the refusal
	// can be told to the registration the login names.
	ErrLTI13LoginTarget = fault.New(fault.Invalid, "the login initiation's target_link_uri is not this tool's launch URL")
	// ErrLTI13LoginAmbiguous: the login sent no client_id, and several
	// registrations can own it: several of its issuer's hold the
	// deployment it names, or, when it names none, the issuer has
	// several.
	ErrLTI13LoginAmbiguous = fault.New(fault.Invalid,
		"this platform's issuer has several registrations with this tool that can own this login (those holding its "+
			"lti_deployment_id, when it sends one) and the login sent no client_id to tell which: in the LMS, set the tool up so "+
			"that its LTI 1.3 login initiation sends client_id (LMSes certified for LTI 1.3 do; update the LMS or the tool's "+
			"settings there), or at least lti_deployment_id")
)

// CheckLTI13LoginInitiation checks a login initiation's parameters: iss,
// login_hint and target_link_uri are required; each at most
// MaxLTI13LoginParam bytes; client_id and lti_deployment_id, when sent,
// 1 to 255 printable ASCII characters (what a registration can hold); and
// target_link_uri the tool's launchURL, where every launch goes.
func CheckLTI13LoginInitiation(in LTI13LoginInitiation, launchURL string) error {
	params := []struct {
		name, value string
		required    bool
	}{
		{"iss", in.Issuer, true},
		{"login_hint", in.LoginHint, true},
		{"target_link_uri", in.TargetLinkURI, true},
		{"lti_message_hint", in.LTIMessageHint, false},
		{"client_id", in.ClientID, false},
		{"lti_deployment_id", in.DeploymentID, false},
	}
	for _, p := range params {
		switch {
		case p.value == "" && p.required:
			return fault.New(fault.Invalid, "the login initiation lacks %s: an LTI 1.3 platform sends iss, login_hint and target_link_uri", p.name)
		case len(p.value) > MaxLTI13LoginParam:
			return fault.New(fault.Invalid, "the login initiation's %s is longer than %d bytes", p.name, MaxLTI13LoginParam)
		}
	}
	for _, p := range params[4:] {
		if p.value != "" && (len(p.value) > MaxClientIDLength || !printableASCII(p.value)) {
			return fault.New(fault.Invalid, "the login initiation's %s must be 1 to %d printable ASCII characters", p.name, MaxClientIDLength)
		}
	}
	if in.StorageTarget != "" && !ltistorage.ValidTarget(in.StorageTarget) {
		return fault.New(fault.Invalid,
			"the login initiation's lti_storage_target must be a frame's name: 1 to %d of A-Z a-z 0-9 _ - .", MaxLTI13StorageTarget)
	}
	if in.TargetLinkURI != launchURL {
		return fault.Wrap(fault.Invalid, ErrLTI13LoginTarget, fmt.Sprintf(
			"the login initiation's target_link_uri must be this tool's launch URL, %s: set it as the tool's target link URI in the LMS", launchURL))
	}
	return nil
}

// LTI13AuthRequest is the authentication request a login answers with
// (Security Framework 1.0 §5.1.1.2, with LTI Core 1.3's prompt=none).
type LTI13AuthRequest struct {
	ClientID       string
	RedirectURI    string // the tool's launch URL, as registered with the platform
	LoginHint      string
	LTIMessageHint string // empty: not sent, so not echoed
	State          string
	Nonce          string
}

// URL is the request as a URL on the platform's authorization endpoint
// authLoginURL, whose own query parameters are kept (the request's take
// precedence over any of the same name).
func (r LTI13AuthRequest) URL(authLoginURL string) (string, error) {
	u, err := url.Parse(authLoginURL)
	if err != nil {
		return "", fmt.Errorf("the registration's authLoginUrl: %w", err)
	}
	q, err := url.ParseQuery(u.RawQuery)
	if err != nil {
		return "", fmt.Errorf("the registration's authLoginUrl's query: %w", err)
	}
	q.Set("scope", "openid")
	q.Set("response_type", "id_token")
	q.Set("response_mode", "form_post")
	q.Set("prompt", "none")
	q.Set("client_id", r.ClientID)
	q.Set("redirect_uri", r.RedirectURI)
	q.Set("login_hint", r.LoginHint)
	if r.LTIMessageHint != "" {
		q.Set("lti_message_hint", r.LTIMessageHint)
	} else {
		q.Del("lti_message_hint")
	}
	q.Set("state", r.State)
	q.Set("nonce", r.Nonce)
	u.RawQuery = q.Encode()
	u.Fragment, u.RawFragment = "", ""
	return u.String(), nil
}

// PlatformOrigin is the origin (scheme://host[:port]) of a registration's
// authorization endpoint: where 1EdTech's postMessage storage frame is
// served from, so the origin the login page posts to and accepts replies
// from.
func PlatformOrigin(authLoginURL string) (string, error) {
	u, err := url.Parse(authLoginURL)
	if err != nil || u.Scheme == "" || u.Host == "" {
		return "", fmt.Errorf("the registration's authLoginUrl %q has no origin", authLoginURL)
	}
	scheme, host := strings.ToLower(u.Scheme), strings.ToLower(u.Host)
	// A browser writes an origin without its scheme's default port.
	if port := u.Port(); scheme == "https" && port == "443" || scheme == "http" && port == "80" {
		host = strings.TrimSuffix(host, ":"+port)
	}
	return scheme + "://" + host, nil
}
