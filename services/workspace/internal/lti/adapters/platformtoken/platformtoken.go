// Package platformtoken asks an LMS platform's OAuth 2 token endpoint for
// the tool's access tokens to its services (1EdTech Security Framework
// §4.1): the client credentials grant, the tool authenticated by a signed
// client assertion (RFC 7523 §2.2), the scopes asked as one
// space-separated list.
//
// Calls go through pkg/outbound (https, public addresses but for
// LTI_ALLOW_INSECURE_HOSTS, no redirects, no proxy), within the client's
// timeout and reading at most MaxBody bytes. Neither the assertion nor
// the token is ever part of an error.
package platformtoken

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"mime"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/liveproctor/workspaces/pkg/clip"
	"github.com/liveproctor/workspaces/pkg/fault"
	"github.com/liveproctor/workspaces/pkg/outbound"
	ltiapp "github.com/liveproctor/workspaces/services/workspace/internal/lti/app"
)

// MaxBody bounds a token endpoint's answer: a token and its fields, or an
// OAuth error, are well under a kilobyte.
const MaxBody = 16 << 10

// maxRetryAfter bounds the wait a platform's Retry-After asks for.
const maxRetryAfter = time.Hour

// defaultRetryAfter is the wait suggested when a platform throttling or
// down says none (outbound.SuggestedWait): without one, the gateway's
// gRPC client would ask again at once, and the platform with it.
const defaultRetryAfter = 5 * time.Second

// maxExpiresIn bounds the expires_in read, in seconds, so that it converts
// to a duration; the application believes much less (a day).
const maxExpiresIn = 365 * 24 * 3600

// Doer sends a request under the outbound rule; *outbound.Client is one.
type Doer interface {
	Do(req *http.Request, maxBytes int64) (outbound.Response, error)
}

// Client is ltiapp.TokenEndpoint over a Doer.
type Client struct {
	client Doer
	now    func() time.Time
}

var _ ltiapp.TokenEndpoint = (*Client)(nil)

// New returns a client calling token endpoints with client; now is the
// clock Retry-After dates are read on (time.Now when nil).
func New(client Doer, now func() time.Time) *Client {
	if now == nil {
		now = time.Now
	}
	return &Client{client: client, now: now}
}

// Grant POSTs the client credentials grant with assertion for scope to
// tokenURL and reads the token.
func (c *Client) Grant(ctx context.Context, tokenURL, assertion, scope string) (ltiapp.GrantedToken, error) {
	form := url.Values{
		"grant_type":            {"client_credentials"},
		"client_assertion_type": {"urn:ietf:params:oauth:client-assertion-type:jwt-bearer"},
		"client_assertion":      {assertion},
		"scope":                 {scope},
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, tokenURL, strings.NewReader(form.Encode()))
	if err != nil {
		return ltiapp.GrantedToken{}, refusedURL(outbound.ErrMalformed)
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Accept", "application/json")
	resp, err := c.client.Do(req, MaxBody)
	switch {
	case errors.Is(err, outbound.ErrNotHTTPS), errors.Is(err, outbound.ErrNotPublic), errors.Is(err, outbound.ErrMalformed):
		return ltiapp.GrantedToken{}, refusedURL(err)
	case errors.Is(err, outbound.ErrTooLarge):
		return ltiapp.GrantedToken{}, fault.Wrap(fault.BadGateway, err, fmt.Sprintf("The platform's token endpoint answered over %d KiB.", MaxBody>>10))
	case err != nil:
		// The error of a failed call names the URL, never the body sent.
		return ltiapp.GrantedToken{}, fault.Wrap(fault.BadGateway, err, "The platform's token endpoint could not be reached.")
	case resp.Status == http.StatusTooManyRequests || resp.Status >= 500:
		return ltiapp.GrantedToken{}, &fault.Error{Kind: fault.Unavailable,
			Message:    fmt.Sprintf("The platform's token endpoint answered HTTP %d; retry later.", resp.Status),
			RetryAfter: outbound.SuggestedWait(resp.Header.Get("Retry-After"), c.now(), maxRetryAfter, defaultRetryAfter)}
	case resp.Status != http.StatusOK:
		return ltiapp.GrantedToken{}, refusal(resp)
	}
	return readToken(resp)
}

// tokenAnswer is a token endpoint's successful answer (RFC 6749 §5.1).
type tokenAnswer struct {
	AccessToken string   `json:"access_token"`
	TokenType   string   `json:"token_type"`
	ExpiresIn   *float64 `json:"expires_in"`
	Scope       string   `json:"scope"`
}

// readToken reads a 200 answer: a bearer token, its life and scopes.
func readToken(resp outbound.Response) (ltiapp.GrantedToken, error) {
	if media, _, err := mime.ParseMediaType(resp.Header.Get("Content-Type")); err != nil || media != "application/json" {
		return ltiapp.GrantedToken{}, fault.New(fault.BadGateway, "The platform's token endpoint answered with %q, not JSON.", clip.Runes(resp.Header.Get("Content-Type"), 64))
	}
	var a tokenAnswer
	if err := json.Unmarshal(resp.Body, &a); err != nil {
		return ltiapp.GrantedToken{}, fault.New(fault.BadGateway, "The platform's token endpoint answered with JSON that is not a token.")
	}
	switch {
	case a.AccessToken == "":
		return ltiapp.GrantedToken{}, fault.New(fault.BadGateway, "The platform's token endpoint answered with no access_token.")
	case !strings.EqualFold(a.TokenType, "Bearer"):
		return ltiapp.GrantedToken{}, fault.New(fault.BadGateway, "The platform's token endpoint answered a token of type %q, not Bearer.", clip.Runes(a.TokenType, 32))
	case a.ExpiresIn != nil && *a.ExpiresIn <= 0:
		return ltiapp.GrantedToken{}, fault.New(fault.BadGateway, "The platform's token endpoint answered a token that has expired (expires_in %v).", *a.ExpiresIn)
	}
	g := ltiapp.GrantedToken{AccessToken: a.AccessToken, Scope: a.Scope}
	if a.ExpiresIn != nil {
		g.ExpiresIn = time.Duration(min(*a.ExpiresIn, maxExpiresIn)) * time.Second
	}
	return g, nil
}

// oauthError is a token endpoint's refusal (RFC 6749 §5.2).
type oauthError struct {
	Error       string `json:"error"`
	Description string `json:"error_description"`
}

// refusal is BadGateway naming the platform's OAuth error, clipped, or its
// status when it gave none.
func refusal(resp outbound.Response) error {
	var e oauthError
	if json.Unmarshal(resp.Body, &e) != nil || e.Error == "" {
		return fault.New(fault.BadGateway, "The platform's token endpoint answered HTTP %d.", resp.Status)
	}
	msg := fmt.Sprintf("The platform refused the tool an access token (HTTP %d): %s", resp.Status, clip.Runes(e.Error, 64))
	if e.Description != "" {
		msg += ": " + clip.Runes(e.Description, 200)
	}
	return fault.New(fault.BadGateway, "%s", msg)
}

// refusedURL is the outbound rule's refusal err of the registration's
// token URL.
func refusedURL(err error) error {
	return fault.Wrap(fault.FailedPrecondition, err,
		fmt.Sprintf("The LTI registration's authTokenUrl %s (%v).", outbound.PublicURLRule, err))
}
