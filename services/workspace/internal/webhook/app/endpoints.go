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
	webhookdomain "github.com/liveproctor/workspaces/services/workspace/internal/webhook/domain"
)

// Workspaces is what the endpoint use cases need of the workspace side:
// its tenancy rule and its write path. The workspaces it answers are the
// workspace domain's, whose endpoints (Webhooks) are read, and changed
// inside Write only.
type Workspaces interface {
	// Managed returns the active workspace id if caller may manage its key
	// pairs and endpoints (its own, or one it manages); any other is the
	// usual not-found answer.
	Managed(ctx context.Context, caller domain.Caller, id string) (*domain.Workspace, error)
	// Get returns workspace id, deleted or not, for delivery; an unknown
	// id is domain.ErrNotFound.
	Get(ctx context.Context, id string) (*domain.Workspace, error)
	// Write changes a workspace the way every change is made: read, apply,
	// store under the revision read (starting over when another request
	// wrote in between), the events the change records attributed to actor
	// and requestID and published before it returns. current, when not
	// nil, is the workspace as the caller read it, the first attempt's;
	// read reads it (again). apply reports whether it changed anything.
	Write(ctx context.Context, actor domain.Actor, requestID string, current *domain.Workspace,
		read func() (*domain.Workspace, error), apply func(*domain.Workspace) (bool, error)) error
}

// Sealer protects endpoints' secrets at rest (the service's secret box),
// each bound to a label, so a stored secret cannot be moved to another
// endpoint.
type Sealer interface {
	Seal(label, secret string) ([]byte, error)
	Open(label string, sealed []byte) (string, error)
}

// secretLabel is what an endpoint's secrets are bound to: its id, in a
// form no app key (a UUID) or LTI tool key id (base32) takes.
func secretLabel(endpointID string) string { return "webhook:" + endpointID }

// Settings are what the endpoint use cases are configured with.
type Settings struct {
	// Policy is the rule of an endpoint's URL (https on public hosts, but
	// for WEBHOOK_ALLOW_INSECURE_HOSTS).
	Policy webhookdomain.URLPolicy
	// Now is the clock: time.Now when nil.
	Now func() time.Time
	// Logger is where failures no caller hears of are reported:
	// slog.Default() when nil.
	Logger *slog.Logger
}

// Endpoints are the use cases of a workspace's webhook endpoints: create,
// list, get, update, delete, rotate a secret, the attempts, resend,
// recover and test, for callers; and, as the dispatcher's EndpointSource,
// what delivering to one needs and what delivery decides about it.
type Endpoints struct {
	ws         Workspaces
	secrets    Sealer
	deliveries Deliveries
	events     EventSource
	encode     Encoder
	s          Settings
	ids        domain.EventIDSource // a test message's ids
}

var _ EndpointSource = (*Endpoints)(nil)

// NewEndpoints returns the endpoints' use cases.
func NewEndpoints(ws Workspaces, secrets Sealer, deliveries Deliveries, events EventSource, encode Encoder, s Settings) *Endpoints {
	if ws == nil || secrets == nil || deliveries == nil || events == nil || encode == nil {
		panic("webhookapp: a dependency of the endpoints' use cases is nil")
	}
	if s.Now == nil {
		s.Now = time.Now
	}
	if s.Logger == nil {
		s.Logger = slog.Default()
	}
	return &Endpoints{ws: ws, secrets: secrets, deliveries: deliveries, events: events, encode: encode, s: s}
}

// timestamp is the current time as stored and shown: UTC, milliseconds.
func (e *Endpoints) timestamp() time.Time { return e.s.Now().UTC().Truncate(time.Millisecond) }

// endpoint returns the endpoint endpointID of a workspace the caller owns
// or manages, with the workspace.
func (e *Endpoints) endpoint(ctx context.Context, caller domain.Caller, id, endpointID string) (*domain.Workspace, webhookdomain.Endpoint, error) {
	w, err := e.ws.Managed(ctx, caller, id)
	if err != nil {
		return nil, webhookdomain.Endpoint{}, err
	}
	ep, ok := w.Webhooks().Get(endpointID)
	if !ok {
		return nil, webhookdomain.Endpoint{}, endpointNotFound(endpointID)
	}
	return w, ep, nil
}

// enabled returns the endpoint as endpoint does, refusing one that is
// turned off: nothing is delivered to it until it is on again.
func (e *Endpoints) enabled(ctx context.Context, caller domain.Caller, id, endpointID string) (webhookdomain.Endpoint, error) {
	_, ep, err := e.endpoint(ctx, caller, id, endpointID)
	if err == nil && !ep.Enabled {
		err = errDisabled
	}
	return ep, err
}

var errDisabled = fault.New(fault.FailedPrecondition, "the webhook is disabled: enable it first (PATCH enabled: true)")

// endpointNotFound answers an endpoint the workspace does not hold.
func endpointNotFound(endpointID string) error {
	return fault.New(fault.NotFound, "webhook %q not found", clip.Runes(endpointID, 64))
}

// endpointError names the endpoint in the domain's not-found answer.
func endpointError(err error, endpointID string) error {
	if errors.Is(err, webhookdomain.ErrEndpointNotFound) {
		return endpointNotFound(endpointID)
	}
	return err
}

// managedRead is a write's read of a workspace the caller owns or manages.
func (e *Endpoints) managedRead(ctx context.Context, caller domain.Caller, id string) func() (*domain.Workspace, error) {
	return func() (*domain.Workspace, error) { return e.ws.Managed(ctx, caller, id) }
}

// seal seals secret for the endpoint endpointID.
func (e *Endpoints) seal(endpointID, secret string) ([]byte, error) {
	sealed, err := e.secrets.Seal(secretLabel(endpointID), secret)
	if err != nil {
		return nil, fmt.Errorf("seal the webhook's secret: %w", err)
	}
	return sealed, nil
}

// refused reports whether err is an answer that certainly stored nothing: a
// rule, a missing workspace, or lost races. Anything else (an unreachable
// store, a failed publish of a stored change) may have stored the change.
func refused(err error) bool {
	switch fault.KindOf(err) {
	case fault.Invalid, fault.NotFound, fault.Conflict, fault.FailedPrecondition, fault.PreconditionFailed,
		fault.Aborted, fault.PermissionDenied:
		return true
	}
	return false
}
