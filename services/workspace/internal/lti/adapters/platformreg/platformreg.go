// Package platformreg speaks to LMS platforms for LTI Dynamic Registration
// (1EdTech LTI-DR 1.0): it reads a platform's OpenID configuration and
// posts the tool's client metadata to its registration endpoint.
//
// Calls go through pkg/outbound (https, public addresses but for
// LTI_ALLOW_INSECURE_HOSTS, no redirects, no proxy), each within the
// client's timeout and reading at most MaxBody bytes. What the platform
// answered is checked here only as HTTP (status, media type, size); what
// it says is the domain's to read.
package platformreg

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"mime"
	"net/http"

	"github.com/liveproctor/workspaces/pkg/clip"
	"github.com/liveproctor/workspaces/pkg/fault"
	"github.com/liveproctor/workspaces/pkg/outbound"
	ltiapp "github.com/liveproctor/workspaces/services/workspace/internal/lti/app"
)

// MaxBody bounds what a platform's answer may weigh: configurations and
// registered clients are a few kilobytes.
const MaxBody = 64 << 10

// Doer sends a request under the outbound rule; *outbound.Client is one.
type Doer interface {
	Do(req *http.Request, maxBytes int64) (outbound.Response, error)
}

// Registrar is ltiapp.PlatformRegistrar over a Doer.
type Registrar struct {
	client Doer
}

var _ ltiapp.PlatformRegistrar = (*Registrar)(nil)

// New returns a registrar that calls platforms with client.
func New(client Doer) *Registrar { return &Registrar{client: client} }

// Configuration GETs the platform's OpenID configuration at url.
func (r *Registrar) Configuration(ctx context.Context, url string) ([]byte, error) {
	const doing = "read the platform's OpenID configuration"
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, refusedURL(outbound.ErrMalformed, doing)
	}
	req.Header.Set("Accept", "application/json")
	return r.call(req, doing, "reading its OpenID configuration")
}

// Register POSTs the tool's client metadata to the platform's registration
// endpoint, with the registration token as a bearer token.
func (r *Registrar) Register(ctx context.Context, endpoint, token string, client []byte) ([]byte, error) {
	const doing = "register the tool with the platform"
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, endpoint, bytes.NewReader(client))
	if err != nil {
		return nil, refusedURL(outbound.ErrMalformed, doing)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
	req.Header.Set("Authorization", "Bearer "+token)
	return r.call(req, doing, "registering the tool")
}

// call sends req and returns the answer's body when it is a 2xx JSON
// answer. A URL the outbound rule refuses for what it says is Invalid, the
// caller's mistake (refusedURL, for doing); every other failure is
// BadGateway, saying what the tool was doing (what).
func (r *Registrar) call(req *http.Request, doing, what string) ([]byte, error) {
	resp, err := r.client.Do(req, MaxBody)
	switch {
	case errors.Is(err, outbound.ErrNotHTTPS), errors.Is(err, outbound.ErrNotPublic), errors.Is(err, outbound.ErrMalformed):
		return nil, refusedURL(err, doing)
	case errors.Is(err, outbound.ErrTooLarge):
		return nil, fault.Wrap(fault.BadGateway, err, fmt.Sprintf("The platform's answer is over %d KiB (%s).", MaxBody>>10, what))
	case errors.Is(err, context.DeadlineExceeded) || isTimeout(err):
		return nil, fault.Wrap(fault.BadGateway, err, fmt.Sprintf("The platform did not answer in time (%s).", what))
	case err != nil:
		// A name that resolves to a non-public address
		// (outbound.ErrAddressNotPublic) is answered so too, word for
		// word: whoever holds a registration link learns nothing of the
		// service's DNS.
		return nil, fault.Wrap(fault.BadGateway, err, fmt.Sprintf("The platform could not be reached (%s).", what))
	case resp.Status < 200 || resp.Status > 299:
		return nil, fault.New(fault.BadGateway, "The platform answered with HTTP %d (%s).", resp.Status, what)
	}
	if media, _, err := mime.ParseMediaType(resp.Header.Get("Content-Type")); err != nil || !isJSON(media) {
		return nil, fault.New(fault.BadGateway, "The platform answered with %q, not JSON (%s).", clip.Runes(resp.Header.Get("Content-Type"), 64), what)
	}
	return resp.Body, nil
}

// refusedURL is the outbound rule's refusal err of the URL the tool needed
// to do doing: Invalid, wrapping err.
func refusedURL(err error, doing string) error {
	return fault.Wrap(fault.Invalid, err, fmt.Sprintf("Could not %s: its URL %s (%v).", doing, outbound.PublicURLRule, err))
}

// isJSON reports whether a media type is JSON's or a +json one.
func isJSON(media string) bool {
	return media == "application/json" || len(media) > 5 && media[len(media)-5:] == "+json"
}

// isTimeout reports whether err is a network timeout.
func isTimeout(err error) bool {
	var t interface{ Timeout() bool }
	return errors.As(err, &t) && t.Timeout()
}
