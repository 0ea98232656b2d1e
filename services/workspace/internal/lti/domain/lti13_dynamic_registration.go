package domain

import (
	"encoding/json"
	"fmt"
	"net/url"
	"slices"

	"github.com/liveproctor/workspaces/pkg/clip"
	"github.com/liveproctor/workspaces/pkg/fault"
	"github.com/liveproctor/workspaces/pkg/outbound"
)

// LTI Dynamic Registration (1EdTech LTI-DR 1.0): a platform opens the
// tool's registration link with the URL of its OpenID configuration and a
// registration token; the tool reads the configuration
// (ReadPlatformConfiguration), posts its client metadata (ToolClient) to
// the platform's registration endpoint, and reads the client the platform
// made (ReadRegisteredClient), which becomes a registration of the link's
// workspace.

// The JSON members of LTI-DR that carry LTI's own parts of a configuration.
const (
	platformConfigurationMember = "https://purl.imsglobal.org/spec/lti-platform-configuration"
	toolConfigurationMember     = "https://purl.imsglobal.org/spec/lti-tool-configuration"
)

// PlatformConfiguration is what the tool uses of a platform's OpenID
// configuration.
type PlatformConfiguration struct {
	Issuer                string
	AuthorizationEndpoint string
	TokenEndpoint         string // "" when the platform has none
	JWKSURI               string
	RegistrationEndpoint  string
	// Product is the platform's product_family_code (moodle, canvas, …),
	// for the page that says it worked; may be empty.
	Product string
	// DeepLinking: the platform says it sends LtiDeepLinkingRequest.
	DeepLinking bool
}

// platformConfigurationDoc is the JSON a platform publishes (OpenID Connect
// Discovery, with LTI-DR's additions).
type platformConfigurationDoc struct {
	Issuer                string    `json:"issuer"`
	AuthorizationEndpoint string    `json:"authorization_endpoint"`
	TokenEndpoint         string    `json:"token_endpoint"`
	JWKSURI               string    `json:"jwks_uri"`
	RegistrationEndpoint  string    `json:"registration_endpoint"`
	SigningAlgs           *[]string `json:"id_token_signing_alg_values_supported"`
	Scopes                *[]string `json:"scopes_supported"`
	ResponseTypes         *[]string `json:"response_types_supported"`
	LTI                   *struct {
		Product  string `json:"product_family_code"`
		Messages []struct {
			Type string `json:"type"`
		} `json:"messages_supported"`
	} `json:"https://purl.imsglobal.org/spec/lti-platform-configuration"`
}

// errPlatformConfiguration starts every refusal of a platform's
// configuration.
const errPlatformConfiguration = "The platform's OpenID configuration cannot be used to register the tool: "

// ReadPlatformConfiguration reads the configuration body fetched from
// configURL and checks that the tool can register with it: its issuer has
// configURL's host (LTI-DR 1.0 §3.5.1), every endpoint the tool calls or
// sends browsers to follows the outbound rule, the platform signs
// id_tokens with RS256 and answers OpenID authentication requests with an
// id_token, and it sends resource-link launches. A refusal is Invalid and
// says which of these failed.
func ReadPlatformConfiguration(body []byte, configURL string, urls URLPolicy) (PlatformConfiguration, error) {
	var doc platformConfigurationDoc
	if err := json.Unmarshal(body, &doc); err != nil {
		return PlatformConfiguration{}, fault.New(fault.Invalid, "%s%s", errPlatformConfiguration, "it is not a JSON object of the OpenID Connect Discovery shape.")
	}
	if why := checkIssuerHost(doc.Issuer, configURL, urls); why != "" {
		return PlatformConfiguration{}, fault.New(fault.Invalid, "%s%s", errPlatformConfiguration, why)
	}
	if why := checkPlatformEndpoints(doc, urls); why != "" {
		return PlatformConfiguration{}, fault.New(fault.Invalid, "%s%s", errPlatformConfiguration, why)
	}
	if why := checkPlatformSupport(doc); why != "" {
		return PlatformConfiguration{}, fault.New(fault.Invalid, "%s%s", errPlatformConfiguration, why)
	}
	cfg := PlatformConfiguration{
		Issuer: doc.Issuer, AuthorizationEndpoint: doc.AuthorizationEndpoint, TokenEndpoint: doc.TokenEndpoint,
		JWKSURI: doc.JWKSURI, RegistrationEndpoint: doc.RegistrationEndpoint,
	}
	for _, m := range doc.LTI.Messages {
		cfg.DeepLinking = cfg.DeepLinking || m.Type == MessageDeepLinking
	}
	if isProductCode(doc.LTI.Product) {
		cfg.Product = doc.LTI.Product
	}
	return cfg, nil
}

// checkIssuerHost says what is wrong with issuer ("" when nothing): it must
// be a registrable issuer whose host (and port) is configURL's, so that a
// configuration served from one platform's host cannot speak for another.
func checkIssuerHost(issuer, configURL string, urls URLPolicy) string {
	if why := checkURL(urls, issuer, true); why != "" {
		return "its issuer " + why + "."
	}
	cu, err := url.Parse(configURL)
	if err != nil {
		return "the configuration URL does not parse, so no issuer can be on its host."
	}
	if iu, err := url.Parse(issuer); err != nil || outbound.HostPort(iu) != outbound.HostPort(cu) {
		return fmt.Sprintf("its issuer %q is not on the host of the configuration URL (%s), as LTI Dynamic Registration requires.", clip.Runes(issuer, 200), outbound.HostPort(cu))
	}
	return ""
}

// checkPlatformEndpoints says which endpoint breaks the outbound rule.
func checkPlatformEndpoints(doc platformConfigurationDoc, urls URLPolicy) string {
	endpoints := []struct{ name, value string }{
		{"authorization_endpoint", doc.AuthorizationEndpoint},
		{"jwks_uri", doc.JWKSURI},
		{"registration_endpoint", doc.RegistrationEndpoint},
	}
	if doc.TokenEndpoint != "" {
		endpoints = append(endpoints, struct{ name, value string }{"token_endpoint", doc.TokenEndpoint})
	}
	for _, e := range endpoints {
		if why := checkURL(urls, e.value, false); why != "" {
			return "its " + e.name + " " + why + "."
		}
	}
	return ""
}

// checkPlatformSupport says what the platform lacks that the tool needs.
// A list the configuration leaves out is taken as OpenID's default.
func checkPlatformSupport(doc platformConfigurationDoc) string {
	switch {
	case doc.SigningAlgs == nil || !slices.Contains(*doc.SigningAlgs, "RS256"):
		return "its id_token_signing_alg_values_supported does not include RS256, the only algorithm the tool accepts."
	case doc.Scopes != nil && !slices.Contains(*doc.Scopes, "openid"):
		return "its scopes_supported does not include openid."
	case doc.ResponseTypes != nil && !slices.Contains(*doc.ResponseTypes, "id_token"):
		return "its response_types_supported does not include id_token, the LTI 1.3 launch's response type."
	case doc.LTI == nil:
		return "it has no " + platformConfigurationMember + " member: the platform does not say it speaks LTI."
	}
	for _, m := range doc.LTI.Messages {
		if m.Type == MessageResourceLink {
			return ""
		}
	}
	return "its messages_supported does not include " + MessageResourceLink + ", the launch that opens an exam."
}

// isProductCode reports whether s may be shown as a product name: short
// printable ASCII.
func isProductCode(s string) bool {
	return s != "" && len(s) <= 64 && printableASCII(s)
}

// ToolClient is the client metadata the tool registers with a platform
// (LTI-DR 1.0 §3.6): OpenID Connect Dynamic Client Registration's fields
// and LTI's tool configuration.
type ToolClient struct {
	Name      string
	LoginURL  string
	LaunchURL string
	JWKSURL   string
	// DeepLinking adds the LtiDeepLinkingRequest message, where the teacher
	// picks the exam a link opens, when the platform sends it.
	DeepLinking bool
}

// The parts of the tool's registration request.
type (
	toolClientDoc struct {
		ApplicationType         string            `json:"application_type"`
		ResponseTypes           []string          `json:"response_types"`
		GrantTypes              []string          `json:"grant_types"`
		InitiateLoginURI        string            `json:"initiate_login_uri"`
		RedirectURIs            []string          `json:"redirect_uris"`
		ClientName              string            `json:"client_name"`
		JWKSURI                 string            `json:"jwks_uri"`
		TokenEndpointAuthMethod string            `json:"token_endpoint_auth_method"`
		Scope                   string            `json:"scope"`
		LTI                     toolConfiguration `json:"https://purl.imsglobal.org/spec/lti-tool-configuration"`
	}
	toolConfiguration struct {
		Domain        string        `json:"domain"`
		TargetLinkURI string        `json:"target_link_uri"`
		Claims        []string      `json:"claims"`
		Messages      []toolMessage `json:"messages"`
	}
	toolMessage struct {
		Type          string   `json:"type"`
		TargetLinkURI string   `json:"target_link_uri,omitempty"`
		Label         string   `json:"label,omitempty"`
		Placements    []string `json:"placements,omitempty"`
	}
)

// JSON is the registration request's body. The tool asks for the claims
// its launch reads (the user's e-mail and name), calls no LTI Advantage
// service (no scope), and authenticates to token endpoints with a signed
// JWT (private_key_jwt) should it ever call one. It declares no tool-wide
// custom parameter: each link names its exam in its own exam_config_id
// (docs/contract-notes.md, "Dynamic Registration").
func (c ToolClient) JSON() []byte {
	messages := []toolMessage{{Type: MessageResourceLink, TargetLinkURI: c.LaunchURL, Label: c.Name}}
	if c.DeepLinking {
		messages = append(messages, toolMessage{
			Type: MessageDeepLinking, TargetLinkURI: c.LaunchURL, Label: c.Name,
			Placements: []string{"ContentArea"},
		})
	}
	domain := ""
	if u, err := url.Parse(c.LaunchURL); err == nil {
		domain = u.Host
	}
	body, _ := json.Marshal(toolClientDoc{ // of strings only: cannot fail
		ApplicationType: "web", ResponseTypes: []string{"id_token"}, GrantTypes: []string{"implicit", "client_credentials"},
		InitiateLoginURI: c.LoginURL, RedirectURIs: []string{c.LaunchURL}, ClientName: c.Name, JWKSURI: c.JWKSURL,
		TokenEndpointAuthMethod: "private_key_jwt", Scope: "",
		LTI: toolConfiguration{
			Domain: domain, TargetLinkURI: c.LaunchURL,
			Claims: []string{"iss", "sub", "email", "name", "given_name", "family_name"}, Messages: messages,
		},
	})
	return body
}

// RegisteredClient is what a platform answered a registration with.
type RegisteredClient struct {
	ClientID string
	// DeploymentID is "" when the platform made none (Canvas makes it
	// when the administrator installs the tool).
	DeploymentID string
}

// errRegisteredClient starts every refusal of a registration's answer.
const errRegisteredClient = "The platform's answer to the registration is unusable: "

// ReadRegisteredClient reads the platform's answer to the registration
// request: its client_id (as a registration stores it) and the deployment
// it made, if any. A refusal is BadGateway: the platform answered something
// the tool cannot use.
func ReadRegisteredClient(body []byte) (RegisteredClient, error) {
	var doc struct {
		ClientID *string `json:"client_id"`
		LTI      *struct {
			DeploymentID *string `json:"deployment_id"`
		} `json:"https://purl.imsglobal.org/spec/lti-tool-configuration"`
	}
	if err := json.Unmarshal(body, &doc); err != nil {
		return RegisteredClient{}, fault.New(fault.BadGateway, "%s%s", errRegisteredClient, "it is not the JSON object of a registered client.")
	}
	if doc.ClientID == nil {
		return RegisteredClient{}, fault.New(fault.BadGateway, "%s%s", errRegisteredClient, "it has no client_id.")
	}
	if why := clientIDRule(*doc.ClientID); why != "" {
		return RegisteredClient{}, fault.New(fault.BadGateway, "%s%s", errRegisteredClient, "its client_id "+why+".")
	}
	out := RegisteredClient{ClientID: *doc.ClientID}
	if doc.LTI != nil && doc.LTI.DeploymentID != nil && *doc.LTI.DeploymentID != "" {
		if why := deploymentIDRule(*doc.LTI.DeploymentID); why != "" {
			return RegisteredClient{}, fault.New(fault.BadGateway, "%s%s", errRegisteredClient, "its deployment_id "+why+".")
		}
		out.DeploymentID = *doc.LTI.DeploymentID
	}
	return out, nil
}

// Registration is the registration the platform's configuration and its
// answer make.
func (cfg PlatformConfiguration) Registration(c RegisteredClient) NewRegistration {
	r := NewRegistration{
		Issuer: cfg.Issuer, ClientID: c.ClientID, DeploymentIDs: []string{},
		AuthLoginURL: cfg.AuthorizationEndpoint, JWKSURL: cfg.JWKSURI,
	}
	if c.DeploymentID != "" {
		r.DeploymentIDs = []string{c.DeploymentID}
	}
	if cfg.TokenEndpoint != "" {
		token := cfg.TokenEndpoint
		r.AuthTokenURL = &token
	}
	return r
}
