package app

import (
	"context"
	"errors"

	"github.com/liveproctor/workspaces/pkg/clip"
	"github.com/liveproctor/workspaces/pkg/fault"
	"github.com/liveproctor/workspaces/services/workspace/internal/domain"
)

// Resend delivers one event of the audit trail to an enabled endpoint of a
// workspace the caller owns or manages once more, beside its live feed:
// an event the workspace sees (its own, or of one it manages), whether or
// not it was delivered before.
func (e *Endpoints) Resend(ctx context.Context, caller domain.Caller, id, endpointID, eventID string) error {
	if _, ok := domain.EventIDTime(eventID); !ok {
		return errEventID("eventId")
	}
	if _, err := e.enabled(ctx, caller, id, endpointID); err != nil {
		return err
	}
	if _, err := e.event(ctx, id, eventID); err != nil {
		return err
	}
	return e.deliveries.Resend(ctx, id, endpointID, eventID)
}

// event returns the event eventID if the workspace id sees it.
func (e *Endpoints) event(ctx context.Context, id, eventID string) (domain.Event, error) {
	ev, err := e.events.Event(ctx, id, eventID)
	if errors.Is(err, domain.ErrNotFound) {
		return domain.Event{}, fault.New(fault.NotFound, "event %q not found in the workspace's audit trail", clip.Runes(eventID, 64))
	}
	return ev, err
}

// errEventID refuses field, which is not an event id.
func errEventID(field string) error {
	return fault.InvalidField(field, "must be an event id: 28 lower-case hex digits")
}
