package memstore

import (
	"context"
	"slices"
	"strings"
	"time"

	"github.com/liveproctor/workspaces/services/workspace/internal/app"
	"github.com/liveproctor/workspaces/services/workspace/internal/domain"
)

var _ app.EventLog = (*Repository)(nil)

func (r *Repository) PublishOutbox(_ context.Context, id string, newID func() string) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, e := range r.outboxes[id] {
		if _, ok := r.events[e.Key]; !ok {
			e.ID = newID()
			r.events[e.Key] = e
		}
	}
	delete(r.outboxes, id)
	return nil
}

func (r *Repository) WorkspacesWithOutbox(_ context.Context, before time.Time, limit int) ([]string, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	var ids []string
	for id, box := range r.outboxes {
		if len(ids) < limit && slices.ContainsFunc(box, func(e domain.Event) bool { return e.OccurredAt.Before(before) }) {
			ids = append(ids, id)
		}
	}
	return ids, nil
}

func (r *Repository) AppendEvent(_ context.Context, e domain.Event, newID func() string) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	e.ID = newID()
	if e.Key == "" {
		e.Key = e.ID
	}
	if _, ok := r.events[e.Key]; !ok {
		r.events[e.Key] = e
	}
	return nil
}

func (r *Repository) ListEvents(_ context.Context, q domain.EventQuery) ([]domain.Event, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []domain.Event
	for _, e := range r.events {
		if q.Matches(e) {
			out = append(out, e)
		}
	}
	slices.SortFunc(out, func(a, b domain.Event) int { return strings.Compare(a.ID, b.ID) })
	if len(out) > q.Limit {
		out = out[:q.Limit]
	}
	return out, nil
}

func (r *Repository) Event(_ context.Context, id string) (domain.Event, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, e := range r.events {
		if e.ID == id {
			return e, nil
		}
	}
	return domain.Event{}, domain.ErrNotFound
}
