// Package app holds the webhook context's use cases: a workspace's webhook
// endpoints (their configuration lives in the workspace document, like LTI
// registrations) and the delivery of its audit trail to them, signed to the
// Standard Webhooks spec (pkg/webhook). The delivery state (a cursor per
// endpoint over the events, the attempts made) is the Deliveries store's,
// never the workspace document's.
//
// It is named app, like every context's application package; a file that
// imports both names this one webhookapp.
package app

import (
	"context"
	"time"

	"github.com/liveproctor/workspaces/pkg/fault"
	"github.com/liveproctor/workspaces/services/workspace/internal/domain"
)

// ErrEndpointGone: the endpoint, or its workspace, no longer exists (it was
// deleted). Delivery drops what it held for it.
var ErrEndpointGone = fault.New(fault.NotFound, "webhook not found")

// Target is what delivering to one endpoint needs, read fresh for each
// attempt so that an update, a rotation or a disabling takes effect at the
// next one.
type Target struct {
	WorkspaceID string
	EndpointID  string
	URL         string
	// EventTypes admits the events of these types; empty admits every type.
	EventTypes []string
	Enabled    bool
	// From is an event-id floor (domain.EventIDFloor of the endpoint's
	// creation or latest re-enabling): events at or below it are not
	// delivered by the live feed, only by a recovery.
	From string
	// Secrets are the endpoint's signing secrets, "whsec_…", the current
	// one first, then the previous one while its overlap lasts.
	Secrets []string
}

// Attempt is one delivery attempt as GET …/webhooks/{id}/attempts shows it.
type Attempt struct {
	EventID     string
	AttemptedAt time.Time
	// Status is the receiver's HTTP status; 0 when there was no answer
	// (a timeout, a refused connection or address), which Error says.
	Status     int
	DurationMs int64
	// Response is the first 1 KiB of the answer's body.
	Response string
	Error    string
}

// Deliveries is the delivery state's store (MongoDB in production:
// webhook_cursors, webhook_attempts), as the endpoint use cases need it.
// The dispatcher's own methods (claiming a due cursor under a lease,
// settling an attempt, waking the cursors of a workspace's new events) are
// declared where the dispatcher uses them.
type Deliveries interface {
	// Start makes the endpoint's live cursor, delivering the events after
	// from (an event id); a no-op when it exists. Called before the
	// endpoint is stored, so an endpoint never lacks its cursor; a cursor
	// whose endpoint never got stored is dropped by the dispatcher
	// (ErrEndpointGone).
	Start(ctx context.Context, workspaceID, endpointID, from string) error
	// Forget drops every cursor of the endpoint (it was deleted); its
	// attempts age out with the retention.
	Forget(ctx context.Context, endpointID string) error
	// Attempts returns a page of the endpoint's attempts, newest first,
	// and the token of the next page ("" after the last).
	Attempts(ctx context.Context, endpointID, pageToken string, pageSize int) ([]Attempt, string, error)
	// Resend delivers the event eventID to the endpoint once more, beside
	// the live feed.
	Resend(ctx context.Context, workspaceID, endpointID, eventID string) error
	// Recover delivers again every event after the id after that the live
	// cursor has already settled, in order, beside the live feed.
	Recover(ctx context.Context, workspaceID, endpointID, after string) error
	// Test delivers a synthetic webhook.test message, msgID with body.
	Test(ctx context.Context, workspaceID, endpointID, msgID string, body []byte) error
}

// EndpointSource is what the dispatcher needs of the endpoints'
// configuration: it reads an endpoint for each attempt and records what
// delivery decided about it, each change an event of the audit trail.
type EndpointSource interface {
	// Target returns what delivering to the endpoint needs;
	// ErrEndpointGone when it or its workspace is gone.
	Target(ctx context.Context, workspaceID, endpointID string) (Target, error)
	// Disable turns the endpoint off with the reason, recording
	// webhook.disabled; a no-op when it is off already or gone.
	Disable(ctx context.Context, workspaceID, endpointID, reason string) error
	// AttemptsExhausted records webhook.attemptsExhausted: the endpoint
	// never took the event eventID, and delivery moved past it.
	AttemptsExhausted(ctx context.Context, workspaceID, endpointID, eventID string) error
}

// EventSource reads the audit trail for delivery, as GET …/events with
// includeManaged=true sees it: the events of a workspace and of every
// workspace it manages, settled (older than the settle window), in id
// order.
type EventSource interface {
	// Next returns up to limit events after the id after, of the types
	// (every type when empty).
	Next(ctx context.Context, workspaceID, after string, types []domain.EventType, limit int) ([]domain.Event, error)
	// Event returns the event eventID if the workspace sees it;
	// domain.ErrNotFound otherwise.
	Event(ctx context.Context, workspaceID, eventID string) (domain.Event, error)
}

// Encoder renders an event exactly as GET …/events shows it: a delivery's
// body.
type Encoder func(domain.Event) ([]byte, error)
