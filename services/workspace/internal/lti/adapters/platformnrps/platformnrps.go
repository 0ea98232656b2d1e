// Package platformnrps reads a context's members from an LMS platform's
// Names and Role Provisioning Services 2.0: one GET of a membership
// container page with the tool's bearer token, and the next page's URL
// from its Link header exactly as the platform wrote it (a platform may
// know a page by its URL's exact spelling: pylti1.3 #139).
//
// Calls go through pkg/outbound (https, public addresses but for
// LTI_ALLOW_INSECURE_HOSTS, no redirects, no proxy), within the client's
// timeout and reading at most MaxBody bytes. The token is never part of
// an error.
package platformnrps

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"mime"
	"net/http"
	"net/url"
	"time"

	"github.com/liveproctor/workspaces/pkg/clip"
	"github.com/liveproctor/workspaces/pkg/fault"
	"github.com/liveproctor/workspaces/pkg/outbound"
	"github.com/liveproctor/workspaces/services/workspace/internal/lti/adapters/platformerror"
	ltiapp "github.com/liveproctor/workspaces/services/workspace/internal/lti/app"
)

// MaxBody bounds a page: a thousand members of a few hundred bytes each,
// with room to spare.
const MaxBody = 4 << 20

// MaxNextURL bounds the next page's URL, which a page token carries.
const MaxNextURL = 2048

// maxRetryAfter bounds the wait a platform's Retry-After asks for.
const maxRetryAfter = time.Hour

// defaultRetryAfter is the wait suggested when a platform throttling or
// down says none (outbound.SuggestedWait).
const defaultRetryAfter = 5 * time.Second

// MediaType is a membership container's (NRPS 2.0 §2.2).
const MediaType = "application/vnd.ims.lti-nrps.v2.membershipcontainer+json"

// Doer sends a request under the outbound rule; *outbound.Client is one.
type Doer interface {
	Do(req *http.Request, maxBytes int64) (outbound.Response, error)
}

// Client is ltiapp.MembershipService over a Doer.
type Client struct {
	client Doer
	now    func() time.Time
}

var _ ltiapp.MembershipService = (*Client)(nil)

// New returns a client calling membership services with client; now is the
// clock Retry-After dates are read on (time.Now when nil).
func New(client Doer, now func() time.Time) *Client {
	if now == nil {
		now = time.Now
	}
	return &Client{client: client, now: now}
}

// Members GETs the membership container page at pageURL.
func (c *Client) Members(ctx context.Context, pageURL, accessToken string) (ltiapp.MembersPage, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, pageURL, nil)
	if err != nil {
		return ltiapp.MembersPage{}, fault.New(fault.BadGateway, "The platform's memberships URL is not a URL: %s", clip.Runes(pageURL, 200))
	}
	req.Header.Set("Accept", MediaType)
	req.Header.Set("Authorization", "Bearer "+accessToken)
	resp, err := c.client.Do(req, MaxBody)
	switch {
	case errors.Is(err, outbound.ErrNotHTTPS), errors.Is(err, outbound.ErrNotPublic), errors.Is(err, outbound.ErrMalformed):
		return ltiapp.MembersPage{}, fault.Wrap(fault.BadGateway, err,
			fmt.Sprintf("The platform's memberships URL %s (%v).", outbound.PublicURLRule, err))
	case errors.Is(err, outbound.ErrTooLarge):
		return ltiapp.MembersPage{}, fault.Wrap(fault.BadGateway, err, fmt.Sprintf("The platform answered a page of members over %d MiB.", MaxBody>>20))
	case err != nil:
		return ltiapp.MembersPage{}, fault.Wrap(fault.BadGateway, err, "The platform's memberships service could not be reached.")
	case resp.Status == http.StatusUnauthorized:
		return ltiapp.MembersPage{}, ltiapp.ErrTokenRefused
	case resp.Status == http.StatusTooManyRequests || resp.Status >= 500:
		return ltiapp.MembersPage{}, &fault.Error{Kind: fault.Unavailable,
			Message:    fmt.Sprintf("The platform's memberships service answered HTTP %d; retry later.", resp.Status),
			RetryAfter: outbound.SuggestedWait(resp.Header.Get("Retry-After"), c.now(), maxRetryAfter, defaultRetryAfter)}
	case resp.Status != http.StatusOK:
		return ltiapp.MembersPage{}, refusal(resp)
	}
	return readPage(resp, req.URL)
}

// container is a membership container (NRPS 2.0 §2.2); only what the
// roster shows is read.
type container struct {
	Members *[]struct {
		UserID string   `json:"user_id"`
		Name   string   `json:"name"`
		Email  string   `json:"email"`
		Roles  []string `json:"roles"`
		Status string   `json:"status"`
	} `json:"members"`
}

// readPage reads a 200 answer to pageURL: its members and its next page.
func readPage(resp outbound.Response, pageURL *url.URL) (ltiapp.MembersPage, error) {
	if media, _, err := mime.ParseMediaType(resp.Header.Get("Content-Type")); err != nil || (media != MediaType && media != "application/json") {
		return ltiapp.MembersPage{}, fault.New(fault.BadGateway, "The platform's memberships service answered with %q, not a membership container.",
			clip.Runes(resp.Header.Get("Content-Type"), 64))
	}
	var c container
	if err := json.Unmarshal(resp.Body, &c); err != nil || c.Members == nil {
		return ltiapp.MembersPage{}, fault.New(fault.BadGateway, "The platform's memberships service answered JSON that is not a membership container.")
	}
	page := ltiapp.MembersPage{Members: make([]ltiapp.Member, 0, len(*c.Members))}
	for _, m := range *c.Members {
		if m.UserID == "" {
			return ltiapp.MembersPage{}, fault.New(fault.BadGateway, "The platform's memberships service answered a member without a user_id.")
		}
		status := m.Status
		if status == "" {
			status = "Active"
		}
		page.Members = append(page.Members, ltiapp.Member{UserID: m.UserID, Name: m.Name, Email: m.Email, Roles: m.Roles, Status: status})
	}
	next, ok := NextLink(resp.Header.Values("Link"))
	if !ok {
		return page, nil
	}
	u, err := url.Parse(next)
	if err != nil || len(next) > MaxNextURL {
		return ltiapp.MembersPage{}, fault.New(fault.BadGateway, "The platform's next page of members is not a URL of %d characters at most.", MaxNextURL)
	}
	if !u.IsAbs() {
		// A relative reference (RFC 8288 §3.1) resolves against the page's
		// URL; an absolute one is followed as written.
		next = pageURL.ResolveReference(u).String()
	}
	page.Next = next
	return page, nil
}

// refusal is BadGateway naming the platform's message, clipped, or its
// status when it gave none.
func refusal(resp outbound.Response) error {
	msg := platformerror.Message(resp)
	if msg == "" {
		return fault.New(fault.BadGateway, "The platform's memberships service answered HTTP %d.", resp.Status)
	}
	return fault.New(fault.BadGateway, "The platform's memberships service answered HTTP %d: %s", resp.Status, clip.Runes(msg, 200))
}
