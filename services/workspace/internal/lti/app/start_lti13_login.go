package app

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/liveproctor/workspaces/pkg/fault"
	"github.com/liveproctor/workspaces/pkg/ltistorage"
	"github.com/liveproctor/workspaces/services/workspace/internal/domain"
	ltidomain "github.com/liveproctor/workspaces/services/workspace/internal/lti/domain"
)

// LTI13LoginRedirect is a login initiation's answer: where the browser goes
// next, and the state it must present at the launch.
type LTI13LoginRedirect struct {
	// URL is the platform's authorization endpoint with the
	// authentication request's parameters.
	URL   string
	State string
	// StateTTL is how long the state and its nonce may be used
	// (LTI13StateTTL).
	StateTTL time.Duration
	// Nonce is the login's nonce, which a login with platform storage
	// puts there with the state.
	Nonce string
	// StorageTarget and PlatformOrigin are a login's with platform
	// storage (empty otherwise): the storage frame's name, and the origin
	// of the registration's authorization endpoint, which the storage
	// frame has (ltidomain.PlatformOrigin).
	StorageTarget  string
	PlatformOrigin string
}

// LTI13Logins answers LTI 1.3 login initiations: it needs the workspaces
// holding registrations and the store of logins.
type LTI13Logins struct {
	ws     Workspaces
	logins LTI13LoginStore
	s      Settings
}

// NewLTI13Logins returns the login initiation's use case.
func NewLTI13Logins(ws Workspaces, logins LTI13LoginStore, s Settings) *LTI13Logins {
	notNil(ws, logins)
	return &LTI13Logins{ws: ws, logins: logins, s: s.withDefaults()}
}

// Start answers an LTI 1.3 platform's OIDC login initiation,
// for anyone (a browser the LMS sends): it checks the parameters, finds
// the registration by issuer and client_id (or, when no client_id is sent,
// the one registration of the issuer holding the named deployment, or the
// issuer's only one when none is named) in an active workspace, and the
// deployment when one is named; then it stores a new nonce under a new state for
// LTI13StateTTL, and returns the authentication request to send the
// browser to. A login that names lti_storage_target is stored as one
// whose launch proves its browser through the platform's storage. An
// unknown registration or deployment, or a deleted workspace's, is
// UNAUTHENTICATED; the rest of the refusals are INVALID_ARGUMENT
// (ltidomain.CheckLTI13LoginInitiation, ltidomain.ErrLTI13LoginAmbiguous).
func (l *LTI13Logins) Start(ctx context.Context, in ltidomain.LTI13LoginInitiation) (LTI13LoginRedirect, error) {
	redirectURI := l.s.URLs.LTI13Launch()
	if err := ltidomain.CheckLTI13LoginInitiation(in, redirectURI); err != nil {
		return LTI13LoginRedirect{}, err
	}
	w, reg, err := l.registration(ctx, in.Issuer, in.ClientID, in.DeploymentID)
	if err != nil {
		return LTI13LoginRedirect{}, err
	}
	if in.DeploymentID != "" && !reg.HasDeployment(in.DeploymentID) {
		return LTI13LoginRedirect{}, ltidomain.ErrLTI13LoginDeployment
	}
	out, err := newLTI13LoginRedirect(in, reg, redirectURI)
	if err != nil {
		return LTI13LoginRedirect{}, err
	}
	login := LTI13Login{Nonce: out.Nonce, WorkspaceID: w.ID(), RegistrationID: reg.ID, CreatedAt: l.s.timestamp(), StorageTarget: out.StorageTarget}
	if err := l.logins.Put(ctx, out.State, login, LTI13StateTTL); err != nil {
		return LTI13LoginRedirect{}, err
	}
	return out, nil
}

// newLTI13LoginRedirect draws a new state and nonce for a login of reg and
// builds its authentication request. A login with platform storage gets a
// state that names the storage (ltistorage.State).
func newLTI13LoginRedirect(in ltidomain.LTI13LoginInitiation, reg ltidomain.Registration, redirectURI string) (LTI13LoginRedirect, error) {
	out := LTI13LoginRedirect{State: newLTI13Secret(), Nonce: newLTI13Secret(), StateTTL: LTI13StateTTL}
	if in.StorageTarget != "" {
		origin, err := ltidomain.PlatformOrigin(reg.AuthLoginURL)
		if err != nil {
			return LTI13LoginRedirect{}, fault.Wrap(fault.Internal, err, "the registration's authorization endpoint is unusable")
		}
		out.StorageTarget, out.PlatformOrigin = in.StorageTarget, origin
		out.State = ltistorage.State(out.State, in.StorageTarget, origin)
	}
	request := ltidomain.LTI13AuthRequest{
		ClientID: reg.ClientID, RedirectURI: redirectURI, LoginHint: in.LoginHint, LTIMessageHint: in.LTIMessageHint,
		State: out.State, Nonce: out.Nonce,
	}
	var err error
	if out.URL, err = request.URL(reg.AuthLoginURL); err != nil {
		return LTI13LoginRedirect{}, fault.Wrap(fault.Internal, err, "the registration's authorization endpoint is unusable")
	}
	return out, nil
}

// registration finds the registration a login names, in an active
// workspace: by (issuer, clientID), or without a client id the one that
// can own the login (registrationOwning).
func (l *LTI13Logins) registration(ctx context.Context, issuer, clientID, deploymentID string) (*domain.Workspace, ltidomain.Registration, error) {
	if clientID == "" {
		return l.registrationOwning(ctx, issuer, deploymentID)
	}
	w, err := l.ws.ByLTIPair(ctx, issuer, clientID)
	switch {
	case errors.Is(err, domain.ErrNotFound):
		return nil, ltidomain.Registration{}, ltidomain.ErrLTI13LoginRegistration
	case err != nil:
		return nil, ltidomain.Registration{}, err
	case w.Deleted():
		return nil, ltidomain.Registration{}, ltidomain.ErrLTI13LoginRegistration
	}
	reg, ok := w.LTIRegistrations().For(issuer, clientID)
	if !ok {
		return nil, ltidomain.Registration{}, fault.Wrap(fault.Internal,
			fmt.Errorf("workspace %s lists no registration of the pair it was found by", w.ID()), "the registration could not be read")
	}
	return w, reg, nil
}

// registrationOwning finds, for a login without client_id, the one
// registration in an active workspace that can own it: of issuer, and
// holding deploymentID when the login names one. Registrations of the
// issuer without that deployment, in any workspace, do not count, so
// registering another tenant's issuer changes nothing for its logins that
// name their deployment. Two workspaces are read at most: enough to tell
// one registration from several.
func (l *LTI13Logins) registrationOwning(ctx context.Context, issuer, deploymentID string) (*domain.Workspace, ltidomain.Registration, error) {
	ws, err := l.ws.WithLTIIssuer(ctx, issuer, deploymentID, 2)
	if err != nil {
		return nil, ltidomain.Registration{}, err
	}
	var owner *domain.Workspace
	var owning []ltidomain.Registration
	for _, w := range ws {
		if regs := w.LTIRegistrations().Owning(issuer, deploymentID); len(regs) > 0 {
			owner, owning = w, append(owning, regs...)
		}
	}
	switch {
	case len(owning) == 0:
		return nil, ltidomain.Registration{}, ltidomain.ErrLTI13LoginRegistration
	case len(owning) > 1:
		return nil, ltidomain.Registration{}, ltidomain.ErrLTI13LoginAmbiguous
	}
	return owner, owning[0], nil
}
