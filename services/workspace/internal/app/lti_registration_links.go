package app

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"time"

	"github.com/liveproctor/workspaces/pkg/fault"
	"github.com/liveproctor/workspaces/pkg/ident"
	"github.com/liveproctor/workspaces/services/workspace/internal/domain"
)

// LTI Dynamic Registration's links: a workspace's manager makes one
// (CreateLTIRegistrationLink); the platform opens it, and the tool
// registers with the platform and stores the registration
// (RegisterLTIPlatform, lti13_dynamic_registration.go).

// LTIRegistrationLinkTTL is how long a registration link works.
const LTIRegistrationLinkTTL = time.Hour

// LTIRegistrationLinkPath starts every registration link's path; the link's
// secret is its last segment.
const LTIRegistrationLinkPath = "/lti/v1p3/register/"

// LTIRegistrationLink is what a registration link stands for, kept under
// its secret until it is used or expires.
type LTIRegistrationLink struct {
	// ID names the link in the audit trail; the secret never appears there.
	ID          string
	WorkspaceID string
	// Creator made the link: the registration it makes is theirs.
	Creator   domain.Actor
	CreatedAt time.Time
	ExpiresAt time.Time
}

// LTIRegistrationLinks keeps registration links until they are used or
// expire, shared by every replica (Redis), each usable once.
type LTIRegistrationLinks interface {
	// Put stores l under secret for ttl.
	Put(ctx context.Context, secret string, l LTIRegistrationLink, ttl time.Duration) error
	// Take returns the link stored under secret and removes it, in one
	// step; ok is false when there is none (never made, used, expired).
	Take(ctx context.Context, secret string) (l LTIRegistrationLink, ok bool, err error)
}

// PlatformRegistrar speaks to platforms for Dynamic Registration, under the
// outbound rule (adapters/platformreg). Its errors are Invalid (a URL the
// rule refuses) or BadGateway (the platform unreachable, or answering an
// error, too much, or not JSON).
type PlatformRegistrar interface {
	// Configuration reads the platform's OpenID configuration at url.
	Configuration(ctx context.Context, url string) ([]byte, error)
	// Register posts the tool's client metadata to the platform's
	// registration endpoint with its registration token, and returns the
	// platform's answer.
	Register(ctx context.Context, endpoint, token string, client []byte) ([]byte, error)
}

// WithLTIDynamicRegistration lets the app make registration links, kept in
// links, and register with platforms through registrar. Without it both
// are refused as unavailable.
func WithLTIDynamicRegistration(links LTIRegistrationLinks, registrar PlatformRegistrar) Option {
	return func(a *App) { a.lti13.links, a.lti13.registrar = links, registrar }
}

var errDynamicRegistrationOff = fault.New(fault.Unavailable,
	"LTI Dynamic Registration is not available: this workspace service has no store for registration links")

// LTIRegistrationLinkAnswer is a new link: its URL, a secret until ExpiresAt.
type LTIRegistrationLinkAnswer struct {
	URL       string
	ExpiresAt time.Time
}

// CreateLTIRegistrationLink makes a registration link for the workspace id,
// which the caller must own or manage (the rule of its registrations). The
// link's creation is in the audit trail; a link whose event could not be
// recorded is withdrawn and the call answered unavailable.
func (a *App) CreateLTIRegistrationLink(ctx context.Context, caller domain.Caller, id string) (LTIRegistrationLinkAnswer, error) {
	if a.lti13.links == nil || a.lti13.registrar == nil {
		return LTIRegistrationLinkAnswer{}, errDynamicRegistrationOff
	}
	w, err := a.keyManaged(ctx, caller, id)
	if err != nil {
		return LTIRegistrationLinkAnswer{}, err
	}
	now := a.timestamp()
	secret := newLTI13Secret()
	link := LTIRegistrationLink{
		ID: ident.NewUUID(), WorkspaceID: w.ID(), Creator: caller.Actor(), CreatedAt: now, ExpiresAt: now.Add(LTIRegistrationLinkTTL),
	}
	if err := a.lti13.links.Put(ctx, secret, link, LTIRegistrationLinkTTL); err != nil {
		return LTIRegistrationLinkAnswer{}, err
	}
	e := domain.NewEvent(domain.EventLTIRegistrationLinkCreated, w, caller.Actor(),
		domain.Target{Type: domain.TargetLTIRegistrationLink, ID: link.ID}, caller.RequestID, now)
	if err := a.appendEvent(ctx, e); err != nil {
		_, _, _ = a.lti13.links.Take(context.WithoutCancel(ctx), secret)
		return LTIRegistrationLinkAnswer{}, fault.Wrap(fault.Unavailable, fmt.Errorf("record a registration link: %w", err),
			"the registration link's audit event could not be recorded, so no link was made; retry shortly")
	}
	return LTIRegistrationLinkAnswer{URL: a.ltiBase() + LTIRegistrationLinkPath + secret, ExpiresAt: link.ExpiresAt}, nil
}

// errLinkUnusable answers a link that is not (or no longer) one.
var errLinkUnusable = fault.New(fault.Unauthenticated,
	"This registration link is unknown, used or expired (links work once, for an hour). "+
		"Ask for a new one and give it to the LMS again.")

// takeLink takes the link stored under secret, or answers why it cannot.
func (a *App) takeLink(ctx context.Context, secret string) (LTIRegistrationLink, error) {
	if a.lti13.links == nil || a.lti13.registrar == nil {
		return LTIRegistrationLink{}, errDynamicRegistrationOff
	}
	if !isLTI13Secret(secret) {
		return LTIRegistrationLink{}, errLinkUnusable
	}
	link, ok, err := a.lti13.links.Take(ctx, secret)
	switch {
	case err != nil:
		return LTIRegistrationLink{}, err
	case !ok:
		return LTIRegistrationLink{}, errLinkUnusable
	}
	return link, nil
}

// giveLinkBack stores a link taken by a registration that failed again, for
// the rest of its life: only a registration that succeeds uses a link up.
// A failure is logged: the administrator then makes a new link.
func (a *App) giveLinkBack(ctx context.Context, secret string, link LTIRegistrationLink) {
	left := link.ExpiresAt.Sub(a.now())
	if left <= 0 {
		return
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	if err := a.lti13.links.Put(ctx, secret, link, left); err != nil {
		a.logger.Warn("a registration link whose registration failed could not be kept for another try",
			"link", link.ID, "error", err.Error())
	}
}

// isLTI13Secret reports whether s has the shape of the secrets
// newLTI13Secret makes, so that nothing else reaches the store.
func isLTI13Secret(s string) bool {
	b, err := base64.RawURLEncoding.DecodeString(s)
	return err == nil && len(b) == lti13SecretBytes
}

// errLinkWorkspaceGone answers a link whose workspace was deleted since.
var errLinkWorkspaceGone = fault.New(fault.Unauthenticated,
	"This registration link's workspace was deleted: the link no longer registers anything.")

// linkWorkspace returns the link's workspace while it is active.
func (a *App) linkWorkspace(ctx context.Context, link LTIRegistrationLink) (*domain.Workspace, error) {
	w, err := a.repo.Get(ctx, link.WorkspaceID)
	switch {
	case errors.Is(err, domain.ErrNotFound):
		return nil, errLinkWorkspaceGone
	case err != nil:
		return nil, err
	case w.Deleted():
		return nil, errLinkWorkspaceGone
	}
	return w, nil
}
