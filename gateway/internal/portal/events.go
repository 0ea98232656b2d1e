package portal

import (
	"net/http"
	"net/url"

	workspacev1 "github.com/liveproctor/workspaces/pkg/gen/workspace/v1"
)

// eventsPageSize is how many events a page of the audit trail shows.
const eventsPageSize = 50

// eventsView is a page of the audit trail, oldest first as the service
// pages it.
type eventsView struct {
	Events []event
	// Next is the next page's address, empty on the last page for now;
	// First is the first page's, empty on it.
	Next, First string
}

// event is one event as the page shows it.
type event struct {
	Type, Time, Actor, Target, RequestID string
}

// events shows a page of the workspace's audit trail. The page token
// travels in the query, as the service answered it.
func (p *portal) events(w http.ResponseWriter, r *http.Request, s *session) {
	token := r.URL.Query().Get("pageToken")
	size := int32(eventsPageSize)
	page, err := p.service.ListWorkspaceEvents(r.Context(), &workspacev1.ListWorkspaceEventsRequest{Id: s.id(), PageSize: &size, PageToken: token})
	if err != nil {
		p.fail(w, r, s, err, "/portal/events")
		return
	}
	v := eventsView{}
	for _, e := range page.GetEvents() {
		v.Events = append(v.Events, event{
			Type: e.GetType(), Time: e.GetOccurTime(), Actor: actor(e.GetActor()),
			Target: e.GetTarget().GetType() + " " + e.GetTarget().GetId(), RequestID: e.GetRequestId(),
		})
	}
	// A short page is the end for now (the service always answers a
	// token, to poll with).
	if len(page.GetEvents()) == eventsPageSize && page.GetNextPageToken() != "" {
		v.Next = "/portal/events?pageToken=" + url.QueryEscape(page.GetNextPageToken())
	}
	if token != "" {
		v.First = "/portal/events"
	}
	p.render(w, r, http.StatusOK, "events", newView(r, s, "Audit trail", "events", v))
}

// actor says who made a change: a key pair by its app key, an
// administrator in the portal by the link that started the session, or the
// service itself.
func actor(a *workspacev1.EventActor) string {
	switch a.GetType() {
	case "keyPair":
		return "Key pair " + a.GetAppKey() + " of workspace " + a.GetWorkspaceId()
	case "portal":
		return "Administrator's portal (link " + a.GetLinkId() + ")"
	case "system":
		return "The service"
	}
	return a.GetType()
}
