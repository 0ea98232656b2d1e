package app

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/liveproctor/workspaces/pkg/fault"
	"github.com/liveproctor/workspaces/pkg/ident"
	"github.com/liveproctor/workspaces/services/workspace/internal/domain"
)

// LTI Dynamic Registration's links: a workspace's manager makes one
// (DynamicRegistration.CreateLink); the platform opens it, and the tool
// registers with the platform and stores the registration
// (DynamicRegistration.Register, register_platform.go).

// RegistrationLinkTTL is how long a registration link works.
const RegistrationLinkTTL = time.Hour

// RegistrationLink is what a registration link stands for, kept under
// its secret until it is used or expires.
type RegistrationLink struct {
	// ID names the link in the audit trail; the secret never appears there.
	ID          string
	WorkspaceID string
	// Creator made the link: the registration it makes is theirs.
	Creator   domain.Actor
	CreatedAt time.Time
	ExpiresAt time.Time
}

// RegistrationLinkStore keeps registration links until they are used or
// expire, shared by every replica (Redis), each usable once.
type RegistrationLinkStore interface {
	// Put stores l under secret for ttl.
	Put(ctx context.Context, secret string, l RegistrationLink, ttl time.Duration) error
	// Take returns the link stored under secret and removes it, in one
	// step; ok is false when there is none (never made, used, expired).
	Take(ctx context.Context, secret string) (l RegistrationLink, ok bool, err error)
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

// DynamicRegistration is LTI Dynamic Registration: it needs the workspace
// side (whose registrations it adds to), the store of registration links,
// and the registrar that speaks to platforms.
type DynamicRegistration struct {
	registrationWriter
	links     RegistrationLinkStore
	registrar PlatformRegistrar
}

// NewDynamicRegistration returns Dynamic Registration's use cases.
func NewDynamicRegistration(ws Workspaces, links RegistrationLinkStore, registrar PlatformRegistrar, s Settings) *DynamicRegistration {
	notNil(ws, links, registrar)
	return &DynamicRegistration{registrationWriter: registrationWriter{ws: ws, s: s.withDefaults()}, links: links, registrar: registrar}
}

// RegistrationLinkAnswer is a new link: its URL, a secret until ExpiresAt.
type RegistrationLinkAnswer struct {
	URL       string
	ExpiresAt time.Time
}

// CreateLink makes a registration link for the workspace id,
// which the caller must own or manage (the rule of its registrations). The
// link's creation is in the audit trail; a link whose event could not be
// recorded is withdrawn and the call answered unavailable.
func (d *DynamicRegistration) CreateLink(ctx context.Context, caller domain.Caller, id string) (RegistrationLinkAnswer, error) {
	w, err := d.ws.Managed(ctx, caller, id)
	if err != nil {
		return RegistrationLinkAnswer{}, err
	}
	now := d.s.timestamp()
	secret := ident.NewSecret()
	link := RegistrationLink{
		ID: ident.NewUUID(), WorkspaceID: w.ID(), Creator: caller.Actor(), CreatedAt: now, ExpiresAt: now.Add(RegistrationLinkTTL),
	}
	if err := d.links.Put(ctx, secret, link, RegistrationLinkTTL); err != nil {
		return RegistrationLinkAnswer{}, err
	}
	e := domain.NewEvent(domain.EventLTIRegistrationLinkCreated, w, caller.Actor(),
		domain.Target{Type: domain.TargetLTIRegistrationLink, ID: link.ID}, caller.RequestID, now)
	if err := d.ws.AppendEvent(ctx, e); err != nil {
		_, _, _ = d.links.Take(context.WithoutCancel(ctx), secret)
		return RegistrationLinkAnswer{}, fault.Wrap(fault.Unavailable, fmt.Errorf("record a registration link: %w", err),
			"the registration link's audit event could not be recorded, so no link was made; retry shortly")
	}
	return RegistrationLinkAnswer{URL: d.s.URLs.RegistrationLink(secret), ExpiresAt: link.ExpiresAt}, nil
}

// errLinkUnusable answers a link that is not (or no longer) one.
var errLinkUnusable = fault.New(fault.Unauthenticated,
	"This registration link is unknown, used or expired (links work once, for an hour). "+
		"Ask for a new one and give it to the LMS again.")

// takeLink takes the link stored under secret, or answers why it cannot.
func (d *DynamicRegistration) takeLink(ctx context.Context, secret string) (RegistrationLink, error) {
	if !ident.IsSecret(secret) {
		return RegistrationLink{}, errLinkUnusable
	}
	link, ok, err := d.links.Take(ctx, secret)
	switch {
	case err != nil:
		return RegistrationLink{}, err
	case !ok:
		return RegistrationLink{}, errLinkUnusable
	}
	return link, nil
}

// giveLinkBack stores a link taken by a registration that failed again, for
// the rest of its life: only a registration that succeeds uses a link up.
// A failure is logged: the administrator then makes a new link.
func (d *DynamicRegistration) giveLinkBack(ctx context.Context, secret string, link RegistrationLink) {
	left := link.ExpiresAt.Sub(d.s.Now())
	if left <= 0 {
		return
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	if err := d.links.Put(ctx, secret, link, left); err != nil {
		d.s.Logger.Warn("a registration link whose registration failed could not be kept for another try",
			"link", link.ID, "error", err.Error())
	}
}

// errLinkWorkspaceGone answers a link whose workspace was deleted since.
var errLinkWorkspaceGone = fault.New(fault.Unauthenticated,
	"This registration link's workspace was deleted: the link no longer registers anything.")

// linkWorkspace returns the link's workspace while it is active.
func (d *DynamicRegistration) linkWorkspace(ctx context.Context, link RegistrationLink) (*domain.Workspace, error) {
	w, err := d.ws.Get(ctx, link.WorkspaceID)
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
