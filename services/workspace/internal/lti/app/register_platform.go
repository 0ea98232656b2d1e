package app

import (
	"context"
	"errors"
	"time"

	"github.com/liveproctor/workspaces/pkg/fault"
	"github.com/liveproctor/workspaces/pkg/outbound"
	"github.com/liveproctor/workspaces/services/workspace/internal/domain"
	ltidomain "github.com/liveproctor/workspaces/services/workspace/internal/lti/domain"
)

// PlatformRegistration is what a Dynamic Registration stored.
type PlatformRegistration struct {
	WorkspaceID  string
	Registration ltidomain.Registration
	// Product is the platform's product family (moodle, canvas, …); may
	// be empty.
	Product string
}

// LinkOpening is a platform's opening of a registration link.
type LinkOpening struct {
	// Link is the link's secret (its path's last segment).
	Link string
	// ConfigurationURL and Token are the platform's openid_configuration
	// and registration_token.
	ConfigurationURL string
	Token            string
}

// Register completes an LTI Dynamic Registration (1EdTech LTI-DR
// 1.0) that a platform opened through a registration link, for anyone (the
// administrator's browser, sent by the platform): the link is the
// credential. It takes the link, reads the platform's configuration
// (ltidomain.ReadPlatformConfiguration), registers the tool with the platform,
// and stores the client the platform made as a registration of the link's
// workspace, by the link's creator, with the link's use in the audit trail.
// A registration that certainly stored nothing gives the link back for
// another try; one whose write may have been stored (the store unreachable
// mid-write) does not, so a retry cannot register the platform twice.
func (d *DynamicRegistration) Register(ctx context.Context, requestID string, in LinkOpening) (PlatformRegistration, error) {
	if err := d.check(in); err != nil {
		return PlatformRegistration{}, err
	}
	link, err := d.takeLink(ctx, in.Link)
	if err != nil {
		return PlatformRegistration{}, err
	}
	out, err := d.registerThroughLink(ctx, requestID, link, in)
	var stored *mayHaveStored
	switch {
	case errors.As(err, &stored):
		// The registration may be stored: the link is not given back, so
		// that a retry cannot register the platform twice.
		return PlatformRegistration{}, stored.err
	case err != nil:
		d.giveLinkBack(ctx, in.Link, link)
		return PlatformRegistration{}, err
	}
	return out, nil
}

// mayHaveStored marks a failure of the registration's write that may have
// stored it (an unreachable store, an event not yet published), as opposed
// to a refusal that certainly stored nothing.
type mayHaveStored struct{ err error }

func (m *mayHaveStored) Error() string { return m.err.Error() }
func (m *mayHaveStored) Unwrap() error { return m.err }

// check checks what the platform sent, before the link is taken: a
// request that cannot succeed leaves it alone.
func (d *DynamicRegistration) check(in LinkOpening) error {
	switch {
	case in.ConfigurationURL == "":
		return fault.New(fault.Invalid, "The platform opened the registration link without openid_configuration: "+
			"open it from the LMS's tool registration page, which adds it.")
	case in.Token == "":
		return fault.New(fault.Invalid, "The platform opened the registration link without registration_token.")
	case len(in.Token) > maxRegistrationToken:
		return fault.New(fault.Invalid, "The platform's registration_token is over %d bytes.", maxRegistrationToken)
	}
	if _, err := d.s.Policy.CheckURL(in.ConfigurationURL); err != nil {
		return fault.New(fault.Invalid, "The platform's openid_configuration %s (%v).", outbound.PublicURLRule, err)
	}
	return nil
}

// maxRegistrationToken bounds the registration token the tool passes on.
const maxRegistrationToken = 8 << 10

// registerThroughLink is Register's work once it holds the link: the
// registration is the link creator's, in the platform's request requestID.
func (d *DynamicRegistration) registerThroughLink(ctx context.Context, requestID string, link RegistrationLink, in LinkOpening) (PlatformRegistration, error) {
	w, err := d.linkWorkspace(ctx, link)
	if err != nil {
		return PlatformRegistration{}, err
	}
	// Refuse before the platform makes a client the workspace cannot hold.
	if w.LTIRegistrations().Len() >= ltidomain.MaxRegistrations {
		return PlatformRegistration{}, ltidomain.ErrTooManyRegistrations
	}
	body, err := d.registrar.Configuration(ctx, in.ConfigurationURL)
	if err != nil {
		return PlatformRegistration{}, err
	}
	cfg, err := ltidomain.ReadPlatformConfiguration(body, in.ConfigurationURL, d.s.Policy)
	if err != nil {
		return PlatformRegistration{}, err
	}
	client := ltidomain.ToolClient{
		Name: ltidomain.DeepLinkItemTitle, LoginURL: d.s.URLs.LTI13Login(), LaunchURL: d.s.URLs.LTI13Launch(), JWKSURL: d.s.URLs.LTI13JWKS(),
		DeepLinking: cfg.DeepLinking,
	}
	answer, err := d.registrar.Register(ctx, cfg.RegistrationEndpoint, in.Token, client.JSON())
	if err != nil {
		return PlatformRegistration{}, err
	}
	registered, err := ltidomain.ReadRegisteredClient(answer)
	if err != nil {
		return PlatformRegistration{}, err
	}
	// Every value of the registration has passed the rules of a new one
	// (ReadPlatformConfiguration, ReadRegisteredClient), and the write
	// checks it once more.
	reg, err := d.add(ctx, link.Creator, requestID, w, func() (*domain.Workspace, error) { return d.linkWorkspace(ctx, link) },
		cfg.Registration(registered), func(w *domain.Workspace, now time.Time) {
			w.RecordChange(domain.EventLTIRegistrationLinkUsed, domain.Target{Type: domain.TargetLTIRegistrationLink, ID: link.ID}, now, nil)
		})
	if err != nil && !refused(err) {
		return PlatformRegistration{}, &mayHaveStored{err: err}
	}
	if err != nil {
		return PlatformRegistration{}, err
	}
	return PlatformRegistration{WorkspaceID: w.ID(), Registration: reg, Product: cfg.Product}, nil
}
