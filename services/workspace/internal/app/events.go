package app

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"time"

	"github.com/liveproctor/workspaces/pkg/fault"
	"github.com/liveproctor/workspaces/services/workspace/internal/domain"
)

// EventLog is the audit trail's store. A change's events travel in the
// workspace's outbox, written with the change by the Repository; the
// EventLog publishes them from there (see docs/events.md).
type EventLog interface {
	// PublishOutbox copies the events in the workspace's outbox into the
	// audit trail, each with a public id from newID made just before its
	// insert, and removes them from the outbox. An event already published
	// keeps its first copy.
	PublishOutbox(ctx context.Context, workspaceID string, newID func() string) error
	// WorkspacesWithOutbox returns up to limit workspaces whose outbox
	// holds an event that occurred before before, the longest waiting
	// first.
	WorkspacesWithOutbox(ctx context.Context, before time.Time, limit int) ([]string, error)
	// AppendEvent stores an event that rides on no workspace write.
	AppendEvent(ctx context.Context, e domain.Event, newID func() string) error
	// ListEvents returns the events q selects, in id order.
	ListEvents(ctx context.Context, q domain.EventQuery) ([]domain.Event, error)
	// Event returns the event whose public id is id; domain.ErrNotFound
	// when there is none.
	Event(ctx context.Context, id string) (domain.Event, error)
}

// EventSettings tune the audit trail.
type EventSettings struct {
	// Settle is how old an event must be before lists return it
	// (EVENTS_SETTLE): a publish is bounded by half of it, so an event
	// stamped earlier never lands behind a cursor that passed its id.
	Settle time.Duration
	// RelayInterval is how often the relay publishes leftover outboxes
	// (EVENTS_RELAY_INTERVAL). How long events are kept is the store's
	// business (EVENT_RETENTION).
	RelayInterval time.Duration
}

// WithEventLog records the audit trail in log. Without it, events stay in
// the workspaces' outboxes and lists of events are empty.
func WithEventLog(log EventLog, s EventSettings) Option {
	return func(a *App) {
		if s.Settle <= 0 {
			s.Settle = 2 * time.Second
		}
		if s.RelayInterval <= 0 {
			s.RelayInterval = 5 * time.Second
		}
		a.events, a.eventSettings = log, s
	}
}

// DeliveryWaker is told when a workspace's events are published, so that
// the webhook deliveries following the audit trail of the workspace and
// of its managers look for them once they settle, instead of at their next
// idle re-check (WEBHOOK_IDLE_RECHECK), which bounds how late they are
// when a wake is lost.
type DeliveryWaker interface {
	// Wake brings the deliveries that follow the events of workspaceIDs
	// forward to at, unless they are due sooner.
	Wake(ctx context.Context, workspaceIDs []string, at time.Time) error
}

// WithDeliveryWaker wakes the webhook deliveries on every publish. It is
// best effort: a failed wake is logged, and the change is acknowledged all
// the same.
func WithDeliveryWaker(w DeliveryWaker) Option { return func(a *App) { a.waker = w } }

// author is who makes a change, and in which request.
type author struct {
	actor     domain.Actor
	requestID string
}

func by(c domain.Caller) author { return author{actor: c.Actor(), requestID: c.RequestID} }

// bySystem is the service acting on its own (bootstrap, expiries).
var bySystem = author{actor: domain.SystemActor}

// errEventNotRecorded answers a change that was stored but whose event could
// not be published: the change is not acknowledged, and a retry is harmless
// (the relay publishes the event meanwhile).
const eventNotRecordedMessage = "the change was stored but its audit event could not be recorded yet; retry shortly"

// appendEvent records e, an event that rides on no document's write, in
// the audit trail, within the settle window as publish does; with no audit
// trail, it records nothing.
func (a *App) appendEvent(ctx context.Context, e domain.Event) error {
	if a.events == nil {
		return nil
	}
	insertCtx, cancel := context.WithTimeout(ctx, a.eventSettings.Settle/2)
	defer cancel()
	if err := a.events.AppendEvent(insertCtx, e, a.newEventID); err != nil {
		return err
	}
	a.wake(ctx, append(slices.Clone(e.Managers), e.WorkspaceID))
	return nil
}

// publish moves w's outbox into the audit trail, then wakes the deliveries
// that follow it (its own and its managers'). A failure to publish is
// Unavailable: the change is not acknowledged until its event is
// published.
func (a *App) publish(ctx context.Context, w *domain.Workspace) error {
	if err := a.publishOutbox(ctx, w.ID()); err != nil {
		return err
	}
	a.wake(ctx, append(w.Managers(), w.ID()))
	return nil
}

// publishOutbox moves workspace id's outbox into the audit trail.
func (a *App) publishOutbox(ctx context.Context, id string) error {
	if a.events == nil {
		return nil
	}
	// The bound keeps every insert within the settle window of its id.
	ctx, cancel := context.WithTimeout(ctx, a.eventSettings.Settle/2)
	defer cancel()
	if err := a.events.PublishOutbox(ctx, id, a.newEventID); err != nil {
		return fault.Wrap(fault.Unavailable, fmt.Errorf("publish the events of %s: %w", id, err), eventNotRecordedMessage)
	}
	return nil
}

// wake tells the waker that the events of workspaceIDs were published:
// they settle within the window, and a tenth of it more allows for the
// replicas' clocks, whose times a delivery's look compares with the ids.
func (a *App) wake(ctx context.Context, workspaceIDs []string) {
	if a.waker == nil || a.events == nil {
		return
	}
	at := a.now().Add(a.eventSettings.Settle + a.eventSettings.Settle/10)
	if err := a.waker.Wake(ctx, workspaceIDs, at); err != nil {
		a.logger.Warn("webhook deliveries were not woken for new events; they find them at their idle re-check",
			"workspaces", workspaceIDs, "error", err.Error())
	}
}

func (a *App) newEventID() string { return a.eventIDs.Next(a.now()) }

// relayBatch bounds the outboxes one relay pass publishes.
const relayBatch = 100

// relayBatches bounds the batches of one pass; the next pass goes on.
const relayBatches = 10

// RelayEvents publishes the outboxes that requests left behind (a crash or
// an outage between a change and its publish). It runs once at once, then
// every RelayInterval until ctx ends.
func (a *App) RelayEvents(ctx context.Context, logger *slog.Logger) {
	if a.events == nil {
		return
	}
	t := time.NewTicker(a.eventSettings.RelayInterval)
	defer t.Stop()
	for {
		if err := a.RelayOnce(ctx); err != nil && ctx.Err() == nil {
			logger.Warn("the event relay failed; it tries again", "error", err.Error(), "retry_in", a.eventSettings.RelayInterval)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// RelayOnce is one pass of the relay. It takes the outboxes whose oldest
// event is older than the settle window: a request publishes its own within
// half of it, so what is older was left behind.
func (a *App) RelayOnce(ctx context.Context) error {
	for range relayBatches {
		ids, err := a.events.WorkspacesWithOutbox(ctx, a.now().Add(-a.eventSettings.Settle), relayBatch)
		if err != nil {
			return err
		}
		for _, id := range ids {
			if err := a.publishOutbox(ctx, id); err != nil {
				return err
			}
			// The relay knows the workspace, not its managers: their
			// deliveries find these events at their idle re-check.
			a.wake(ctx, []string{id})
		}
		if len(ids) < relayBatch {
			break
		}
	}
	return nil
}
