package app

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"

	"github.com/liveproctor/workspaces/pkg/fault"
	"github.com/liveproctor/workspaces/services/workspace/internal/domain"
)

// EventsInput is a request for a page of a workspace's audit trail.
type EventsInput struct {
	WorkspaceID string
	// IncludeManaged adds the events of every workspace it manages.
	IncludeManaged bool
	// Types, when not empty, keeps events of these types.
	Types     []string
	PageSize  *int32 // nil: domain.DefaultEventPageSize
	PageToken string
}

// EventsResult is a page of events, oldest first. NextPageToken is always
// set: it points after the last event returned (or where the request's
// token pointed, when the page is empty), so a client keeps it and polls
// with it to receive only newer events.
type EventsResult struct {
	Events        []domain.Event
	NextPageToken string
}

// ListWorkspaceEvents returns a page of the audit trail of a workspace
// within the caller's reach (deleted or not: its managers may read how it
// was deleted); any other id is not found. Only events older than the settle
// window are returned, so a cursor never passes an event still landing.
func (a *App) ListWorkspaceEvents(ctx context.Context, caller domain.Caller, in EventsInput) (EventsResult, error) {
	types, size, err := domain.CheckEventQuery(in.Types, in.PageSize)
	if err != nil {
		return EventsResult{}, err
	}
	if in.IncludeManaged && caller.InPortal() {
		return EventsResult{}, errPortalManagedEvents
	}
	w, err := a.load(ctx, in.WorkspaceID)
	if err != nil {
		return EventsResult{}, err
	}
	if !reaches(w, caller) {
		return EventsResult{}, notFound(in.WorkspaceID)
	}
	q := domain.EventQuery{WorkspaceID: w.ID(), IncludeManaged: in.IncludeManaged, Types: types, Limit: size}
	filter := eventFilterDigest(caller.WorkspaceID, q)
	if in.PageToken != "" {
		if q.After, err = decodeEventPageToken(in.PageToken, filter); err != nil {
			return EventsResult{}, err
		}
	}
	res := EventsResult{NextPageToken: encodeEventPageToken(q.After, filter)}
	if a.events == nil {
		return res, nil
	}
	q.Before = domain.EventIDFloor(a.now().Add(-a.eventSettings.Settle))
	if res.Events, err = a.events.ListEvents(ctx, q); err != nil {
		return EventsResult{}, fmt.Errorf("list events: %w", err)
	}
	if n := len(res.Events); n > 0 {
		res.NextPageToken = encodeEventPageToken(res.Events[n-1].ID, filter)
	}
	return res, nil
}

// errPortalManagedEvents: the portal shows its own workspace's audit trail,
// not those of the workspaces it manages.
var errPortalManagedEvents = fault.New(fault.PermissionDenied,
	"includeManaged: a portal session reads its own workspace's events only")

// eventPageToken is a position in an event list (the last id seen; empty:
// the start) and the list it belongs to.
type eventPageToken struct {
	After  string `json:"a"`
	Filter string `json:"f"`
}

var errBadEventPageToken = fault.InvalidField("pageToken",
	"is not a token from this list: pass nextPageToken unchanged, with the same workspace, type and includeManaged")

func encodeEventPageToken(after, filter string) string {
	b, _ := json.Marshal(eventPageToken{After: after, Filter: filter})
	return base64.RawURLEncoding.EncodeToString(b)
}

// decodeEventPageToken returns the position of a token issued for filter.
func decodeEventPageToken(s, filter string) (string, error) {
	if len(s) > 256 {
		return "", errBadEventPageToken
	}
	b, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil {
		return "", errBadEventPageToken
	}
	var t eventPageToken
	if err := json.Unmarshal(b, &t); err != nil || t.Filter != filter {
		return "", errBadEventPageToken
	}
	if _, ok := domain.EventIDTime(t.After); t.After != "" && !ok {
		return "", errBadEventPageToken
	}
	return t.After, nil
}

// eventFilterDigest identifies a caller's event list without carrying it in
// the token.
func eventFilterDigest(caller string, q domain.EventQuery) string {
	h := sha256.New()
	fmt.Fprintf(h, "events|%q|%q|%t|%q", caller, q.WorkspaceID, q.IncludeManaged, q.Types)
	return hex.EncodeToString(h.Sum(nil)[:8])
}
