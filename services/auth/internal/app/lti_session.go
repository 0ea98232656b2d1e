package app

import (
	"context"

	"github.com/liveproctor/workspaces/pkg/fault"
	"github.com/liveproctor/workspaces/services/auth/internal/domain"
)

// LaunchParameter is one parameter of an LTI launch, as received.
type LaunchParameter struct {
	Name, Value string
}

// Launch is what the workspace service found in a verified LTI launch.
type Launch struct {
	WorkspaceID string
	// Email is the user: the address the LMS sent, or one derived from
	// its user id (EmailDerived).
	Email            string
	EmailDerived     bool
	CustomParameters []LaunchParameter
	ReturnURL        string
}

// Launches asks the workspace service, which holds the LTI secrets, to
// verify a launch, presenting the given Authorization header (the service's
// own key pair). Errors are faults with a reason a teacher can act on.
type Launches interface {
	VerifyLaunch(ctx context.Context, authorization, method string, params []LaunchParameter) (Launch, error)
}

// WithLaunches lets the application open sessions from LTI launches.
func WithLaunches(l Launches) Option { return func(a *App) { a.launches = l } }

var errNoLaunches = fault.New(fault.Unavailable, "LTI launches are not available: the auth service has no workspace service to verify them")

// CreateLTISession issues an 8-hour token for the user of an LTI launch
// the workspace service verified, in the launch's workspace: the same
// session a login opens.
func (a *App) CreateLTISession(ctx context.Context, authorization, method string, params []LaunchParameter) (domain.Token, domain.Session, Launch, error) {
	if _, err := a.admit(ctx, opCreateLTISession, authorization); err != nil {
		return "", domain.Session{}, Launch{}, err
	}
	if a.launches == nil {
		return "", domain.Session{}, Launch{}, errNoLaunches
	}
	launch, err := a.launches.VerifyLaunch(ctx, a.settings.ServiceAuthorization, method, params)
	if err != nil {
		return "", domain.Session{}, Launch{}, err
	}
	if err := domain.CheckLogin(launch.Email, launch.WorkspaceID); err != nil {
		// The workspace service vouched for these: not the caller's fault.
		return "", domain.Session{}, Launch{}, fault.Wrap(fault.Internal, err, "internal error")
	}
	token, s, err := a.issue(ctx, launch.Email, launch.WorkspaceID)
	return token, s, launch, err
}
