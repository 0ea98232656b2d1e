package app

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/liveproctor/workspaces/pkg/clip"
	"github.com/liveproctor/workspaces/pkg/fault"
	"github.com/liveproctor/workspaces/pkg/ident"
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
// holding registrations, the store of logins, and the registrations'
// launch health, where refusals are recorded.
type LTI13Logins struct {
	ws     Workspaces
	logins LTI13LoginStore
	health launchHealth
	s      Settings
}

// NewLTI13Logins returns the login initiation's use case.
func NewLTI13Logins(ws Workspaces, logins LTI13LoginStore, health LaunchHealthStore, s Settings) *LTI13Logins {
	notNil(ws, logins, health)
	s = s.withDefaults()
	return &LTI13Logins{ws: ws, logins: logins, health: launchHealth{store: health, s: s}, s: s}
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
//
// A refusal of the request requestID is recorded in the launch health of
// the registration the login names (a wrong target_link_uri or
// deployment), or, when none does, of its issuer's registrations if they
// are one workspace's (issuerBlame).
func (l *LTI13Logins) Start(ctx context.Context, requestID string, in ltidomain.LTI13LoginInitiation) (LTI13LoginRedirect, error) {
	redirectURI := l.s.URLs.LTI13Launch()
	checked := ltidomain.CheckLTI13LoginInitiation(in, redirectURI)
	if checked != nil && !errors.Is(checked, ltidomain.ErrLTI13LoginTarget) {
		return LTI13LoginRedirect{}, checked
	}
	w, reg, whom, err := l.registration(ctx, in)
	switch {
	case checked != nil && err != nil:
		return LTI13LoginRedirect{}, checked
	case err != nil:
		l.health.refused(ctx, err, requestID, whom)
		return LTI13LoginRedirect{}, err
	case checked != nil:
		err = checked
	case in.DeploymentID != "" && !reg.HasDeployment(in.DeploymentID):
		err = ltidomain.ErrLTI13LoginDeployment
	}
	if err != nil {
		l.health.refused(ctx, err, requestID, blameOne(w.ID(), reg.ID))
		return LTI13LoginRedirect{}, err
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
	out := LTI13LoginRedirect{State: ident.NewSecret(), Nonce: ident.NewSecret(), StateTTL: LTI13StateTTL}
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
// can own the login (registrationOwning). When it finds none, whom finds
// the registrations its refusal is recorded on.
func (l *LTI13Logins) registration(ctx context.Context, in ltidomain.LTI13LoginInitiation) (
	w *domain.Workspace, reg ltidomain.Registration, whom func(context.Context) (blame, error), err error) {
	if in.ClientID == "" {
		return l.registrationOwning(ctx, in)
	}
	w, err = l.ws.ByLTIPair(ctx, in.Issuer, in.ClientID)
	switch {
	case errors.Is(err, domain.ErrNotFound):
		return nil, ltidomain.Registration{}, l.issuerBlame(in), ltidomain.ErrLTI13LoginRegistration
	case err != nil:
		return nil, ltidomain.Registration{}, nobody, err
	case w.Deleted():
		return nil, ltidomain.Registration{}, nobody, ltidomain.ErrLTI13LoginRegistration
	}
	reg, ok := w.LTIRegistrations().For(in.Issuer, in.ClientID)
	if !ok {
		return nil, ltidomain.Registration{}, nobody, fault.Wrap(fault.Internal,
			fmt.Errorf("workspace %s lists no registration of the pair it was found by", w.ID()), "the registration could not be read")
	}
	return w, reg, nil, nil
}

// registrationOwning finds, for a login without client_id, the one
// registration in an active workspace that can own it: of issuer, and
// holding deploymentID when the login names one. Registrations of the
// issuer without that deployment, in any workspace, do not count, so
// registering another tenant's issuer changes nothing for its logins that
// name their deployment. Two workspaces are read at most: enough to tell
// one registration from several. Several in one workspace are told of the
// refusal; none, as when the client id is unknown (issuerBlame).
func (l *LTI13Logins) registrationOwning(ctx context.Context, in ltidomain.LTI13LoginInitiation) (
	*domain.Workspace, ltidomain.Registration, func(context.Context) (blame, error), error) {
	ws, err := l.ws.WithLTIIssuer(ctx, in.Issuer, in.DeploymentID, 2)
	if err != nil {
		return nil, ltidomain.Registration{}, nobody, err
	}
	var owner *domain.Workspace
	var owning []ltidomain.Registration
	owners := 0
	for _, w := range ws {
		if regs := w.LTIRegistrations().Owning(in.Issuer, in.DeploymentID); len(regs) > 0 {
			owner, owning, owners = w, append(owning, regs...), owners+1
		}
	}
	switch {
	case len(owning) == 0 && in.DeploymentID == "":
		// The issuer has no registration at all.
		return nil, ltidomain.Registration{}, nobody, ltidomain.ErrLTI13LoginRegistration
	case len(owning) == 0:
		return nil, ltidomain.Registration{}, l.issuerBlame(in), ltidomain.ErrLTI13LoginRegistration
	case owners > 1:
		return nil, ltidomain.Registration{}, nobody, ltidomain.ErrLTI13LoginAmbiguous
	case len(owning) > 1:
		ids := make([]string, len(owning))
		for i, r := range owning {
			ids[i] = r.ID
		}
		return nil, ltidomain.Registration{}, func(context.Context) (blame, error) {
			return blame{workspaceID: owner.ID(), registrationIDs: ids}, nil
		}, ltidomain.ErrLTI13LoginAmbiguous
	}
	return owner, owning[0], nil, nil
}

// issuerBlame finds whom a login that no registration owns is recorded on:
// every registration of its issuer, when they are all one workspace's, with
// what the login sent that none of them holds. An issuer registered in
// several workspaces (Canvas's cloud is one issuer for thousands of
// schools) is told nothing: a school would read of another's logins.
func (l *LTI13Logins) issuerBlame(in ltidomain.LTI13LoginInitiation) func(context.Context) (blame, error) {
	return func(ctx context.Context) (blame, error) {
		ws, err := l.ws.WithLTIIssuer(ctx, in.Issuer, "", 2)
		if err != nil || len(ws) != 1 {
			return blame{}, err
		}
		b := blame{workspaceID: ws[0].ID(), reason: unownedLoginReason(in)}
		for _, r := range ws[0].LTIRegistrations().Owning(in.Issuer, "") {
			b.registrationIDs = append(b.registrationIDs, r.ID)
		}
		return b, nil
	}
}

// unownedLoginReason tells the issuer's administrator what a login that no
// registration owns sent.
func unownedLoginReason(in ltidomain.LTI13LoginInitiation) string {
	if in.ClientID != "" {
		return fmt.Sprintf("a login sent client_id %q, which no registration of this issuer holds: "+
			"if it is this LMS's, register it (the client id the LMS gave the tool, such as a Canvas developer key's id)", clip.Runes(in.ClientID, 64))
	}
	return fmt.Sprintf("a login without client_id sent lti_deployment_id %q, which no registration of this issuer holds: "+
		"add it to the registration of the LMS it belongs to", clip.Runes(in.DeploymentID, 64))
}

// nobody finds no registration to record a refusal on.
func nobody(context.Context) (blame, error) { return blame{}, nil }
