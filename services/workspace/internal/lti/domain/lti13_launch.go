package domain

import (
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"encoding/json"
	"errors"
	"net/url"
	"path"
	"slices"
	"time"

	"github.com/liveproctor/workspaces/pkg/fault"
	"github.com/liveproctor/workspaces/pkg/jose"
)

// The LTI 1.3 claims the tool reads (1EdTech LTI Core 1.3 §5.3 and §5.4,
// Deep Linking 2.0 §4.4).
const (
	claimVersion        = "https://purl.imsglobal.org/spec/lti/claim/version"
	claimMessageType    = "https://purl.imsglobal.org/spec/lti/claim/message_type"
	claimDeploymentID   = "https://purl.imsglobal.org/spec/lti/claim/deployment_id"
	claimTargetLinkURI  = "https://purl.imsglobal.org/spec/lti/claim/target_link_uri"
	claimResourceLink   = "https://purl.imsglobal.org/spec/lti/claim/resource_link"
	claimRoles          = "https://purl.imsglobal.org/spec/lti/claim/roles"
	claimContext        = "https://purl.imsglobal.org/spec/lti/claim/context"
	claimCustom         = "https://purl.imsglobal.org/spec/lti/claim/custom"
	claimLaunchPresent  = "https://purl.imsglobal.org/spec/lti/claim/launch_presentation"
	claimDeepLinkConfig = "https://purl.imsglobal.org/spec/lti-dl/claim/deep_linking_settings"
	claimAGSEndpoint    = "https://purl.imsglobal.org/spec/lti-ags/claim/endpoint"
	claimNRPS           = "https://purl.imsglobal.org/spec/lti-nrps/claim/namesroleservice"
)

// The message types the tool takes.
const (
	MessageResourceLink = "LtiResourceLinkRequest"
	MessageDeepLinking  = "LtiDeepLinkingRequest"
)

// LTI13Leeway is the clock skew allowed on an id_token's exp, iat and nbf.
const LTI13Leeway = 60 * time.Second

// maxLTI13ID bounds the ids of an id_token (LTI Core: at most 255 ASCII
// characters).
const maxLTI13ID = 255

// IDTokenExpectations are what a launch's id_token must match besides the
// registration: the nonce the login issued, the tool's launch URL, the
// time.
type IDTokenExpectations struct {
	Nonce     string
	LaunchURL string
	Now       time.Time
}

// LTI13Launch is a verified LTI 1.3 launch.
type LTI13Launch struct {
	// ID is the launch id a resource-link launch is remembered under (set
	// by the app once remembered).
	ID             string
	WorkspaceID    string
	RegistrationID string
	DeploymentID   string
	MessageType    string
	// Email is the email claim when it is a plain address, else
	// DerivedLTI13Email(issuer, sub), and EmailDerived is set.
	Email          string
	EmailDerived   bool
	Subject        string
	ResourceLinkID string
	// Custom are the custom claim's members as custom_* parameters, as
	// LTI 1.1 names them, so the same rules read both.
	Custom    []LaunchParam
	ReturnURL string
	// DeepLinking is set for a deep-linking request.
	DeepLinking *DeepLinkingSettings
	// ContextID is the context claim's id (the course); empty without one.
	ContextID string
	Roles     []string
	// Services are the Advantage services the platform offers for this
	// launch (read by readServices).
	Services LTI13Services
}

// LTI13Services are the Advantage service claims of a launch, kept with it
// so that its scores and roster can be asked for later: the Assignment and
// Grade Services endpoint (AGS) and Names and Role Provisioning (NRPS).
// A platform that offers neither leaves them empty.
type LTI13Services struct {
	// LineItems is the context's line items' URL, LineItem the one line
	// item of the resource link (either may be empty), Scopes what the
	// tool may do with them.
	LineItems string
	LineItem  string
	Scopes    []string
	// MembershipsURL is the context's membership service.
	MembershipsURL string
}

// DeepLinkingSettings are what a deep-linking request asks of the reply.
type DeepLinkingSettings struct {
	ReturnURL string
	Data      string // echoed byte for byte; may be empty
	// ID names the request kept for the reply (set by the app once kept):
	// a single-use secret the deep-linking page posts back.
	ID string
	// LineItem is whether the reply offers the platform a line item (a
	// gradebook column) with the link: the request carries the AGS
	// endpoint claim and its accept_lineitem is not false (Deep Linking
	// 2.0 §4.4.1: absent means the platform may create it or ignore it).
	LineItem bool
}

// The refusals of an id_token. Unauthenticated (401) for what a platform
// or an attacker got wrong about who is launching; Invalid (400) for a
// launch that is well signed but not one the tool can open.
var (
	ErrLTI13Registration = fault.New(fault.Unauthenticated, "the launch's issuer and client_id match no registration of this tool: register the platform first")
	ErrLTI13Audience     = fault.New(fault.Unauthenticated, "the id_token is not for this tool: its aud does not hold the registration's client_id, or azp is not that client_id")
	ErrLTI13Nonce        = fault.New(fault.Unauthenticated, "the id_token's nonce is not the one this login issued (a replayed or forged launch)")
	ErrLTI13Deployment   = fault.New(fault.Unauthenticated, "the launch's deployment_id is not registered: add it to the registration")
	ErrLTI13Expired      = fault.New(fault.Unauthenticated, "the id_token has expired, or is dated in the future: check the platform's clock and launch again")
)

// CheckIDToken checks the claims of an id_token whose signature was
// verified with reg's platform keys: issuer, audience and authorized party,
// times with LTI13Leeway, the nonce, the deployment, the LTI version, the
// message type, the resource link and the target link, and reads the user.
func CheckIDToken(workspaceID string, reg Registration, c jose.Claims, want IDTokenExpectations) (LTI13Launch, error) {
	if err := checkIdentity(reg, c, want); err != nil {
		return LTI13Launch{}, err
	}
	l := LTI13Launch{WorkspaceID: workspaceID, RegistrationID: reg.ID, Subject: c.Subject}
	var err error
	if l.DeploymentID, err = stringClaim(c, claimDeploymentID, true); err != nil {
		return LTI13Launch{}, err
	}
	if !reg.HasDeployment(l.DeploymentID) {
		return LTI13Launch{}, ErrLTI13Deployment
	}
	if err := checkMessage(c, &l, want.LaunchURL); err != nil {
		return LTI13Launch{}, err
	}
	if err := readUser(reg, c, &l); err != nil {
		return LTI13Launch{}, err
	}
	if l.Custom, err = customParams(c); err != nil {
		return LTI13Launch{}, err
	}
	l.ReturnURL = returnURL(c)
	readContext(c, &l)
	return l, nil
}

// checkIdentity checks who issued the token, for whom, when, and that it
// answers this login.
func checkIdentity(reg Registration, c jose.Claims, want IDTokenExpectations) error {
	switch {
	case c.Issuer != reg.Issuer:
		return ErrLTI13Registration
	case !slices.Contains(c.Audience, reg.ClientID):
		return ErrLTI13Audience
	case (len(c.Audience) > 1 || c.AuthorizedParty != "") && c.AuthorizedParty != reg.ClientID:
		return ErrLTI13Audience
	}
	if err := c.CheckTime(want.Now, LTI13Leeway); err != nil {
		if errors.Is(err, jose.ErrMissingClaim) {
			return fault.New(fault.Invalid, "the id_token lacks exp or iat")
		}
		return ErrLTI13Expired
	}
	if want.Nonce == "" || subtle.ConstantTimeCompare([]byte(c.Nonce), []byte(want.Nonce)) != 1 {
		return ErrLTI13Nonce
	}
	return nil
}

// checkMessage checks the version, the message type and what that type
// requires.
func checkMessage(c jose.Claims, l *LTI13Launch, launchURL string) error {
	version, err := stringClaim(c, claimVersion, true)
	if err != nil {
		return err
	}
	if version != "1.3.0" {
		return lti13Invalid(claimVersion, "must be 1.3.0")
	}
	if l.MessageType, err = stringClaim(c, claimMessageType, true); err != nil {
		return err
	}
	target, err := stringClaim(c, claimTargetLinkURI, l.MessageType == MessageResourceLink)
	if err != nil {
		return err
	}
	if target != "" && target != launchURL {
		return lti13Invalid(claimTargetLinkURI, "must be this tool's launch URL, "+launchURL)
	}
	raw, ok := c.Raw[claimRoles]
	if !ok || json.Unmarshal(raw, &l.Roles) != nil {
		return lti13Invalid(claimRoles, "is required, a list of strings (it may be empty)")
	}
	switch l.MessageType {
	case MessageResourceLink:
		return readResourceLink(c, l)
	case MessageDeepLinking:
		return readDeepLinking(c, l)
	}
	return lti13Invalid(claimMessageType, "must be "+MessageResourceLink+" or "+MessageDeepLinking)
}

func readResourceLink(c jose.Claims, l *LTI13Launch) error {
	var link struct {
		ID *string `json:"id"`
	}
	raw, ok := c.Raw[claimResourceLink]
	if !ok || json.Unmarshal(raw, &link) != nil || link.ID == nil || *link.ID == "" || len(*link.ID) > maxLTI13ID {
		return lti13Invalid(claimResourceLink, "must be an object whose id is 1 to 255 characters")
	}
	l.ResourceLinkID = *link.ID
	return nil
}

func readDeepLinking(c jose.Claims, l *LTI13Launch) error {
	var s struct {
		ReturnURL      string   `json:"deep_link_return_url"`
		AcceptTypes    []string `json:"accept_types"`
		Data           *string  `json:"data"`
		AcceptLineItem *bool    `json:"accept_lineitem"`
	}
	raw, ok := c.Raw[claimDeepLinkConfig]
	if !ok || json.Unmarshal(raw, &s) != nil {
		return lti13Invalid(claimDeepLinkConfig, "must be an object")
	}
	u, err := url.Parse(s.ReturnURL)
	if err != nil || !u.IsAbs() || (u.Scheme != "https" && u.Scheme != "http") {
		return lti13Invalid(claimDeepLinkConfig, "deep_link_return_url must be an absolute URL")
	}
	if !slices.Contains(s.AcceptTypes, "ltiResourceLink") {
		return lti13Invalid(claimDeepLinkConfig, "accept_types must include ltiResourceLink, the only item this tool returns")
	}
	_, ags := c.Raw[claimAGSEndpoint]
	l.DeepLinking = &DeepLinkingSettings{ReturnURL: s.ReturnURL, LineItem: ags && (s.AcceptLineItem == nil || *s.AcceptLineItem)}
	if s.Data != nil {
		l.DeepLinking.Data = *s.Data
	}
	return nil
}

// readUser reads the user: sub (required: the tool opens nothing for an
// anonymous launch), and the email claim, or an address derived from the
// issuer and sub when the platform withholds it.
func readUser(reg Registration, c jose.Claims, l *LTI13Launch) error {
	if c.Subject == "" || len(c.Subject) > maxLTI13ID {
		return lti13Invalid("sub", "must identify the user (1 to 255 characters): this tool takes no anonymous launches")
	}
	email, err := stringClaim(c, "email", false)
	if err != nil {
		return err
	}
	if plainEmail(email) {
		l.Email = email
	} else {
		l.Email, l.EmailDerived = DerivedLTI13Email(reg.Issuer, c.Subject), true
	}
	return nil
}

// DerivedLTI13Email is the stable address of an LTI 1.3 user whose platform
// withholds the e-mail: a digest of the issuer and the user's sub, so the
// same user of the same platform is the same user on every launch, and
// users of two platforms never meet.
func DerivedLTI13Email(issuer, sub string) string {
	sum := sha256.Sum256([]byte("lti1p3\x00" + issuer + "\x00" + sub))
	return hex.EncodeToString(sum[:])[:32] + "@" + DerivedEmailDomain
}

// customParams reads the custom claim, an object of strings, as
// custom_<name> parameters.
func customParams(c jose.Claims) ([]LaunchParam, error) {
	raw, ok := c.Raw[claimCustom]
	if !ok {
		return nil, nil
	}
	var custom map[string]json.RawMessage
	if err := json.Unmarshal(raw, &custom); err != nil {
		return nil, lti13Invalid(claimCustom, "must be an object")
	}
	names := make([]string, 0, len(custom))
	for name := range custom {
		names = append(names, name)
	}
	slices.Sort(names)
	params := make([]LaunchParam, 0, len(names))
	for _, name := range names {
		var v string
		if json.Unmarshal(custom[name], &v) != nil {
			continue // LTI custom values are strings; others are not ours
		}
		params = append(params, LaunchParam{Name: "custom_" + name, Value: v})
	}
	return params, nil
}

// maxServiceURL bounds the service URLs and scopes a launch keeps.
const maxServiceURL = 2048

// readContext reads the course and the Advantage service claims. They
// serve later calls, not the launch: a claim that is malformed or too long
// is left out, and the service it offers is then unavailable, rather than
// the exam refused.
func readContext(c jose.Claims, l *LTI13Launch) {
	var ctx struct {
		ID string `json:"id"`
	}
	if raw, ok := c.Raw[claimContext]; ok && json.Unmarshal(raw, &ctx) == nil && len(ctx.ID) <= maxLTI13ID {
		l.ContextID = ctx.ID
	}
	var ags struct {
		Scope     []string `json:"scope"`
		LineItems string   `json:"lineitems"`
		LineItem  string   `json:"lineitem"`
	}
	if raw, ok := c.Raw[claimAGSEndpoint]; ok && json.Unmarshal(raw, &ags) == nil &&
		len(ags.LineItems) <= maxServiceURL && len(ags.LineItem) <= maxServiceURL &&
		!slices.ContainsFunc(ags.Scope, func(s string) bool { return len(s) > maxServiceURL }) {
		l.Services.LineItems, l.Services.LineItem, l.Services.Scopes = ags.LineItems, ags.LineItem, ags.Scope
	}
	var nrps struct {
		MembershipsURL string `json:"context_memberships_url"`
	}
	if raw, ok := c.Raw[claimNRPS]; ok && json.Unmarshal(raw, &nrps) == nil && len(nrps.MembershipsURL) <= maxServiceURL {
		l.Services.MembershipsURL = nrps.MembershipsURL
	}
}

// returnURL is the launch presentation's return_url, if any.
func returnURL(c jose.Claims) string {
	var p struct {
		ReturnURL string `json:"return_url"`
	}
	if raw, ok := c.Raw[claimLaunchPresent]; ok && json.Unmarshal(raw, &p) == nil {
		return p.ReturnURL
	}
	return ""
}

// stringClaim reads a string claim; required ones must be present and
// non-empty.
func stringClaim(c jose.Claims, name string, required bool) (string, error) {
	raw, ok := c.Raw[name]
	if !ok {
		if required {
			return "", lti13Invalid(name, "is required")
		}
		return "", nil
	}
	var v string
	if json.Unmarshal(raw, &v) != nil || (required && v == "") || len(v) > 2048 {
		return "", lti13Invalid(name, "must be a string")
	}
	return v, nil
}

func lti13Invalid(claim, problem string) error {
	return fault.New(fault.Invalid, "the id_token's %s %s", claimName(claim), problem)
}

// claimName shortens an LTI claim's URI to its last segment for messages.
func claimName(claim string) string {
	if u, err := url.Parse(claim); err == nil && u.Host != "" {
		return path.Base(u.Path) + " claim"
	}
	return claim
}
