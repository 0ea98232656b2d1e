package app

import (
	"context"
	"fmt"
	"slices"

	"github.com/liveproctor/workspaces/services/workspace/internal/domain"
)

// WebhookEvents is the workspace side of the webhook dispatcher's
// EventSource: the audit trail as GET …/events with includeManaged=true
// reads it. It is a type of its own, not methods of App, as LTIPort is.
type WebhookEvents struct{ a *App }

// NewWebhookEvents returns the audit trail of a's workspaces for delivery.
func NewWebhookEvents(a *App) WebhookEvents { return WebhookEvents{a: a} }

// Next returns up to limit events of the workspace and of every workspace
// it manages after the id after, of the types (every type when empty), in
// id order. Like a list, it returns only events older than the settle
// window, so that a delivery never moves past an event still landing
// (docs/events.md, "The cursor and the settle window").
func (s WebhookEvents) Next(ctx context.Context, workspaceID, after string, types []domain.EventType, limit int) ([]domain.Event, error) {
	if s.a.events == nil {
		return nil, nil
	}
	events, err := s.a.events.ListEvents(ctx, domain.EventQuery{
		WorkspaceID: workspaceID, IncludeManaged: true, Types: types, After: after,
		Before: domain.EventIDFloor(s.a.now().Add(-s.a.eventSettings.Settle)), Limit: limit,
	})
	if err != nil {
		return nil, fmt.Errorf("read events for delivery: %w", err)
	}
	return events, nil
}

// Event returns the event eventID if it is the workspace's or one it
// manages'; domain.ErrNotFound otherwise.
func (s WebhookEvents) Event(ctx context.Context, workspaceID, eventID string) (domain.Event, error) {
	if s.a.events == nil {
		return domain.Event{}, domain.ErrNotFound
	}
	e, err := s.a.events.Event(ctx, eventID)
	if err != nil {
		return domain.Event{}, err
	}
	if e.WorkspaceID != workspaceID && !slices.Contains(e.Managers, workspaceID) {
		return domain.Event{}, domain.ErrNotFound
	}
	return e, nil
}
