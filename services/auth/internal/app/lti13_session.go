package app

import (
	"context"

	"github.com/liveproctor/workspaces/pkg/fault"
	"github.com/liveproctor/workspaces/services/auth/internal/domain"
)

// LTI13Launch is what the workspace service found in a verified LTI 1.3
// launch: the user and workspace as for LTI 1.1, and what a deep-linking
// reply needs.
type LTI13Launch struct {
	Launch
	// MessageType is LtiResourceLinkRequest or LtiDeepLinkingRequest.
	MessageType    string
	RegistrationID string
	DeploymentID   string
	// DeepLinkReturnURL and DeepLinkData are a deep-linking request's:
	// where the reply goes and what it echoes.
	DeepLinkReturnURL string
	DeepLinkData      string
	// DeepLinkID names the request the workspace service kept for the
	// reply: the deep-linking page posts it back.
	DeepLinkID string
	// LaunchID is the id a resource-link launch is remembered under; the
	// session it opens carries it.
	LaunchID string
}

// LTI13Launches asks the workspace service, which holds the logins' states
// and nonces and the platforms' keys, to verify an LTI 1.3 launch,
// presenting the given Authorization header (the service's own key pair).
// Errors are faults with a reason an administrator can act on.
type LTI13Launches interface {
	VerifyLTI13Launch(ctx context.Context, authorization, idToken, state string, browser LTI13BrowserProof) (LTI13Launch, error)
}

// LTI13BrowserProof is what the launch's browser presented to show that
// it started the login: the state its cookie kept, or the state and nonce
// its launch page read back from the platform's storage (FromStorage).
type LTI13BrowserProof struct {
	State       string
	Nonce       string
	FromStorage bool
}

// WithLTI13Launches lets the application open sessions from LTI 1.3
// launches.
func WithLTI13Launches(l LTI13Launches) Option { return func(a *App) { a.lti13 = l } }

var errNoLTI13Launches = fault.New(fault.Unavailable,
	"LTI 1.3 launches are not available: the auth service has no workspace service to verify them")

// CreateLTI13Session issues an 8-hour token for the user of an LTI 1.3
// launch the workspace service verified, in the launch's workspace: the
// same session a login opens. The launch's failures are the workspace
// service's to count; the policy refuses an address past its limit first.
func (a *App) CreateLTI13Session(ctx context.Context, authorization, idToken, state string, browser LTI13BrowserProof) (domain.Token, domain.Session, LTI13Launch, error) {
	if _, err := a.admit(ctx, opCreateLTI13Session, authorization); err != nil {
		return "", domain.Session{}, LTI13Launch{}, err
	}
	if a.lti13 == nil {
		return "", domain.Session{}, LTI13Launch{}, errNoLTI13Launches
	}
	launch, err := a.lti13.VerifyLTI13Launch(ctx, a.settings.ServiceAuthorization, idToken, state, browser)
	if err != nil {
		return "", domain.Session{}, LTI13Launch{}, err
	}
	if err := domain.CheckLogin(launch.Email, launch.WorkspaceID); err != nil {
		// The workspace service vouched for these: not the caller's fault.
		return "", domain.Session{}, LTI13Launch{}, fault.Wrap(fault.Internal, err, "internal error")
	}
	token, s, err := a.issueLaunch(ctx, launch.Email, launch.WorkspaceID, launch.LaunchID)
	return token, s, launch, err
}
