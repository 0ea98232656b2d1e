// Package platformags calls an LMS platform's Assignment and Grade
// Services 2.0 with the tool's bearer token: a score POSTed to a line
// item's scores URL, and the line items of a resource link found or made
// in the context's line items.
//
// Calls go through pkg/outbound (https, public addresses but for
// LTI_ALLOW_INSECURE_HOSTS, no redirects, no proxy), within the client's
// timeout and reading at most MaxBody bytes. A platform throttling (429),
// down (5xx) or out of reach is Unavailable with its Retry-After, which
// the delivery retries; any other refusal is BadGateway in the platform's
// words, which it gives up on. The token is never part of an error.
package platformags

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/liveproctor/workspaces/pkg/clip"
	"github.com/liveproctor/workspaces/pkg/fault"
	"github.com/liveproctor/workspaces/pkg/outbound"
	"github.com/liveproctor/workspaces/services/workspace/internal/lti/adapters/platformerror"
	ltiapp "github.com/liveproctor/workspaces/services/workspace/internal/lti/app"
	ltidomain "github.com/liveproctor/workspaces/services/workspace/internal/lti/domain"
)

// The media types of AGS 2.0 (§3.2, §3.4).
const (
	LineItemMediaType          = "application/vnd.ims.lis.v2.lineitem+json"
	LineItemContainerMediaType = "application/vnd.ims.lis.v2.lineitemcontainer+json"
)

// MaxBody bounds an answer: a page of line items, or a platform's error.
const MaxBody = 1 << 20

// maxRetryAfter bounds the wait a platform's Retry-After asks for; the
// delivery bounds it again by its schedule's.
const maxRetryAfter = 10 * time.Hour

// Doer sends a request under the outbound rule; *outbound.Client is one.
type Doer interface {
	Do(req *http.Request, maxBytes int64) (outbound.Response, error)
}

// Client is ltiapp.Gradebook over a Doer.
type Client struct {
	client Doer
	now    func() time.Time
}

var _ ltiapp.Gradebook = (*Client)(nil)

// New returns a client calling platforms' AGS with client; now is the
// clock Retry-After dates are read on (time.Now when nil).
func New(client Doer, now func() time.Time) *Client {
	if now == nil {
		now = time.Now
	}
	return &Client{client: client, now: now}
}

// PostScore POSTs payload to scoresURL.
func (c *Client) PostScore(ctx context.Context, scoresURL, accessToken string, payload map[string]any) error {
	body, err := json.Marshal(payload)
	if err != nil {
		return err
	}
	resp, err := c.call(ctx, "scores", http.MethodPost, scoresURL, accessToken, ltidomain.ScoreMediaType, "", body)
	if err != nil {
		return err
	}
	switch resp.Status {
	case http.StatusOK, http.StatusCreated, http.StatusAccepted, http.StatusNoContent:
		return nil
	}
	return c.refusal("scores", resp)
}

// lineItem is a line item as AGS 2.0 §3.2 writes it; only what finding
// one reads.
type lineItem struct {
	ID             string `json:"id"`
	ResourceLinkID string `json:"resourceLinkId"`
	ResourceID     string `json:"resourceId"`
}

// FindLineItem GETs the context's line items filtered by resource link
// (and resource id), and holds the answer to the filter too, since a
// platform may ignore a filter it does not know.
func (c *Client) FindLineItem(ctx context.Context, lineItemsURL, accessToken, resourceLinkID, resourceID string) (string, bool, error) {
	filter := url.Values{"resource_link_id": {resourceLinkID}}
	if resourceID != "" {
		filter.Set("resource_id", resourceID)
	}
	sep := "?"
	if strings.Contains(lineItemsURL, "?") {
		sep = "&"
	}
	resp, err := c.call(ctx, "line items", http.MethodGet, lineItemsURL+sep+filter.Encode(), accessToken, "", LineItemContainerMediaType, nil)
	if err != nil {
		return "", false, err
	}
	if resp.Status != http.StatusOK {
		return "", false, c.refusal("line items", resp)
	}
	var items []lineItem
	if err := json.Unmarshal(resp.Body, &items); err != nil {
		return "", false, fault.New(fault.BadGateway, "The platform's line items service answered JSON that is not a list of line items.")
	}
	for _, it := range items {
		if it.ID != "" && it.ResourceLinkID == resourceLinkID && (resourceID == "" || it.ResourceID == resourceID) {
			return it.ID, true, nil
		}
	}
	return "", false, nil
}

// CreateLineItem POSTs item to lineItemsURL; the answer's id is the new
// line item's URL.
func (c *Client) CreateLineItem(ctx context.Context, lineItemsURL, accessToken string, item ltiapp.LineItem) (string, error) {
	body, err := json.Marshal(map[string]any{
		"label": item.Label, "scoreMaximum": item.ScoreMaximum, "resourceLinkId": item.ResourceLinkID, "resourceId": item.ResourceID,
	})
	if err != nil {
		return "", err
	}
	resp, err := c.call(ctx, "line items", http.MethodPost, lineItemsURL, accessToken, LineItemMediaType, LineItemMediaType, body)
	if err != nil {
		return "", err
	}
	if resp.Status != http.StatusOK && resp.Status != http.StatusCreated {
		return "", c.refusal("line items", resp)
	}
	var made lineItem
	if err := json.Unmarshal(resp.Body, &made); err != nil || made.ID == "" {
		return "", fault.New(fault.BadGateway, "The platform's line items service answered no id for the line item it made.")
	}
	if u, err := url.Parse(made.ID); err != nil || !u.IsAbs() {
		return "", fault.New(fault.BadGateway, "The platform's new line item's id is not a URL: %s", clip.Runes(made.ID, 200))
	}
	return made.ID, nil
}

// call makes one request and reads its answer; what is not an answer, a
// 401, a 429 or a 5xx is an error here.
func (c *Client) call(ctx context.Context, service, method, target, accessToken, contentType, accept string, body []byte) (outbound.Response, error) {
	req, err := http.NewRequestWithContext(ctx, method, target, bytes.NewReader(body))
	if err != nil {
		return outbound.Response{}, fault.New(fault.BadGateway, "The platform's %s URL is not a URL: %s", service, clip.Runes(target, 200))
	}
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	if accept != "" {
		req.Header.Set("Accept", accept)
	}
	req.Header.Set("Authorization", "Bearer "+accessToken)
	resp, err := c.client.Do(req, MaxBody)
	switch {
	case errors.Is(err, outbound.ErrNotHTTPS), errors.Is(err, outbound.ErrNotPublic), errors.Is(err, outbound.ErrMalformed):
		return resp, fault.Wrap(fault.BadGateway, err, fmt.Sprintf("The platform's %s URL %s (%v).", service, outbound.PublicURLRule, err))
	case errors.Is(err, outbound.ErrTooLarge):
		return resp, fault.Wrap(fault.BadGateway, err, fmt.Sprintf("The platform's %s service answered over %d KiB.", service, MaxBody>>10))
	case err != nil:
		return resp, fault.Wrap(fault.Unavailable, err, fmt.Sprintf("The platform's %s service could not be reached.", service))
	case resp.Status == http.StatusUnauthorized:
		return resp, ltiapp.ErrTokenRefused
	case resp.Status == http.StatusTooManyRequests || resp.Status >= 500:
		// Without a Retry-After the delivery's schedule says when.
		wait, _ := outbound.ParseRetryAfter(resp.Header.Get("Retry-After"), c.now(), maxRetryAfter)
		return resp, &fault.Error{Kind: fault.Unavailable,
			Message:    fmt.Sprintf("The platform's %s service answered HTTP %d.", service, resp.Status),
			RetryAfter: wait}
	}
	return resp, nil
}

// refusal is BadGateway naming the platform's message, clipped, or its
// status when it gave none.
func (c *Client) refusal(service string, resp outbound.Response) error {
	msg := platformerror.Message(resp)
	if msg == "" {
		return fault.New(fault.BadGateway, "The platform's %s service answered HTTP %d.", service, resp.Status)
	}
	return fault.New(fault.BadGateway, "The platform's %s service answered HTTP %d: %s", service, resp.Status, clip.Runes(msg, 300))
}
