// Package app holds the LTI context's use cases: registrations, LTI 1.1
// launches, LTI 1.3 logins, launches and deep linking, Dynamic
// Registration and the tool's keys. They are grouped into structs by what
// they need, each built by a New func that takes every dependency, so no
// call finds one missing. The workspace side is reached only through
// Workspaces, declared here and implemented by the workspace application
// (internal/app/lti_port.go).
//
// It is named app, like every context's application package (its folder,
// internal/lti/app, says which context); a file that imports both names
// this one ltiapp.
package app

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/liveproctor/workspaces/pkg/clip"
	"github.com/liveproctor/workspaces/pkg/fault"
	"github.com/liveproctor/workspaces/services/workspace/internal/domain"
	ltidomain "github.com/liveproctor/workspaces/services/workspace/internal/lti/domain"
)

// Workspaces is what the LTI use cases need of the workspace side: its
// tenancy rule, its write path, the lookups of the workspaces holding an
// LTI key pair or registration, the store-wide claims on (issuer, client
// id) pairs, and the opening of an LTI 1.1 shared secret. The workspaces it
// answers are the workspace domain's: their LTI state (LTIKey,
// LTIRegistrations) is read, and changed inside Write only.
type Workspaces interface {
	// Managed returns the active workspace id if caller may manage its key
	// pairs and registrations (its own, or one it manages); any other is
	// the usual not-found answer.
	Managed(ctx context.Context, caller domain.Caller, id string) (*domain.Workspace, error)
	// Get returns workspace id, deleted or not, for anyone; an unknown id
	// is domain.ErrNotFound.
	Get(ctx context.Context, id string) (*domain.Workspace, error)
	// NotFound is the workspace side's answer for a workspace that does not
	// exist or is not the caller's to see.
	NotFound(id string) error
	// Write changes a workspace the way every change is made: read, apply,
	// store under the revision read (starting over when another request
	// wrote in between), the events the change records attributed to actor
	// and requestID and published before it returns. current, when not
	// nil, is the workspace as the caller read it, the first attempt's;
	// read reads it (again). apply reports whether it changed anything.
	Write(ctx context.Context, actor domain.Actor, requestID string, current *domain.Workspace,
		read func() (*domain.Workspace, error), apply func(*domain.Workspace) (bool, error)) error
	// AppendEvent records e, which rides on no workspace's write, in the
	// audit trail.
	AppendEvent(ctx context.Context, e domain.Event) error
	// ByConsumerKey returns the workspace holding the key pair appKey;
	// domain.ErrNotFound when none does.
	ByConsumerKey(ctx context.Context, appKey string) (*domain.Workspace, error)
	// OpenSecret opens the shared secret of k, a key pair of a workspace.
	OpenSecret(k domain.KeyPair) (string, error)
	// KeyUsed notes a use of the key pair appKey (its lastUsedAt), as an
	// authentication with it does; it never blocks.
	KeyUsed(appKey string)
	// IsRoot reports whether caller calls with a key pair of the root
	// workspace, the only ones that may verify launches.
	IsRoot(caller domain.Caller) bool
	// ByLTIPair returns the workspace listing the registration of
	// (issuer, clientID), deleted or not; domain.ErrNotFound when none does.
	ByLTIPair(ctx context.Context, issuer, clientID string) (*domain.Workspace, error)
	// WithLTIIssuer returns up to limit active workspaces with a
	// registration of issuer (holding deploymentID, when given).
	WithLTIIssuer(ctx context.Context, issuer, deploymentID string, limit int) ([]*domain.Workspace, error)
	// ReservePair claims (issuer, clientID) store-wide for r's
	// registration; ltidomain.ErrRegistrationTaken when it is held.
	ReservePair(ctx context.Context, issuer, clientID string, r domain.LTIReservation) error
	// Reservation returns the claim on (issuer, clientID);
	// domain.ErrNotFound when there is none.
	Reservation(ctx context.Context, issuer, clientID string) (domain.LTIReservation, error)
	// ReleasePair removes the claim on (issuer, clientID) if
	// registrationID holds it.
	ReleasePair(ctx context.Context, issuer, clientID, registrationID string) error
}

// Settings are what every group of use cases is configured with.
type Settings struct {
	// URLs are the tool's URLs below the public base URL.
	URLs ltidomain.ToolURLs
	// Policy is the rule of the URLs an LTI 1.3 registration stores (https
	// on public hosts, but for LTI_ALLOW_INSECURE_HOSTS).
	Policy ltidomain.URLPolicy
	// Now is the clock: time.Now when nil.
	Now func() time.Time
	// Logger is where failures no caller hears of are reported:
	// slog.Default() when nil.
	Logger *slog.Logger
}

// withDefaults fills what a New func may leave unset.
func (s Settings) withDefaults() Settings {
	if s.Now == nil {
		s.Now = time.Now
	}
	if s.Logger == nil {
		s.Logger = slog.Default()
	}
	return s
}

// timestamp is the current time as stored and shown: UTC, milliseconds.
func (s Settings) timestamp() time.Time { return s.Now().UTC().Truncate(time.Millisecond) }

// notNil panics when a New func is given a nil dependency: a wiring
// mistake, found at start rather than at a call.
func notNil(deps ...any) {
	for i, d := range deps {
		if d == nil {
			panic(fmt.Sprintf("ltiapp: dependency %d of a use case is nil", i+1))
		}
	}
}

var errLaunchCaller = fault.New(fault.PermissionDenied,
	"only the root workspace's key pairs may verify LTI launches (the auth service does)")

// registrationNotFound answers a registration the workspace does not hold.
func registrationNotFound(registrationID string) error {
	return fault.New(fault.NotFound, "LTI registration %q not found", clip.Runes(registrationID, 64))
}

// registrationError names the registration, or the deployment id, in the
// domain's not-found answers.
func registrationError(err error, registrationID, deploymentID string) error {
	switch {
	case errors.Is(err, ltidomain.ErrRegistrationNotFound):
		return registrationNotFound(registrationID)
	case errors.Is(err, ltidomain.ErrDeploymentNotFound):
		return fault.New(fault.NotFound, "deployment id %q not found in LTI registration %q", clip.Runes(deploymentID, 64), clip.Runes(registrationID, 64))
	}
	return err
}
