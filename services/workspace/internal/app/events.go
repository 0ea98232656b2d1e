package app

import (
	"context"
	"fmt"
	"log/slog"
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
	ctx, cancel := context.WithTimeout(ctx, a.eventSettings.Settle/2)
	defer cancel()
	return a.events.AppendEvent(ctx, e, a.newEventID)
}

// publish moves workspace id's outbox into the audit trail. A failure is
// Unavailable: the change is not acknowledged until its event is published.
func (a *App) publish(ctx context.Context, id string) error {
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
			if err := a.publish(ctx, id); err != nil {
				return err
			}
		}
		if len(ids) < relayBatch {
			break
		}
	}
	return nil
}
