package e2e

import (
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"testing"
	"time"

	"github.com/liveproctor/workspaces/pkg/testenv"
)

type event struct {
	ID          string `json:"id"`
	Type        string `json:"type"`
	OccurredAt  string `json:"occurredAt"`
	WorkspaceID string `json:"workspaceId"`
	Actor       struct {
		Type        string `json:"type"`
		WorkspaceID string `json:"workspaceId"`
		AppKey      string `json:"appKey"`
		LinkID      string `json:"linkId"` // the portal's
	} `json:"actor"`
	Target struct {
		Type string `json:"type"`
		ID   string `json:"id"`
	} `json:"target"`
	RequestID     string   `json:"requestId"`
	ChangedFields []string `json:"changedFields"`
}

type eventsPage struct {
	Events        []event `json:"events"`
	NextPageToken string  `json:"nextPageToken"`
}

func (c client) events(id string, query url.Values) eventsPage {
	c.t.Helper()
	var page eventsPage
	path := "/api/workspace/" + id + "/events"
	if len(query) > 0 {
		path += "?" + query.Encode()
	}
	c.get(path).ok(&page)
	if page.NextPageToken == "" {
		c.t.Fatalf("GET %s: no nextPageToken", path)
	}
	return page
}

// eventsSettleWait bounds the wait for events to pass the settle window
// (EVENTS_SETTLE, 2 s by default) and be listed.
const eventsSettleWait = 15 * time.Second

// waitEvents polls the list until it holds want events' types, in order.
func (c client) waitEvents(id string, query url.Values, want ...string) eventsPage {
	c.t.Helper()
	var page eventsPage
	testenv.Eventually(c.t, eventsSettleWait, func() error {
		page = c.events(id, query)
		if got := eventTypes(page.Events); !slices.Equal(got, want) {
			return fmt.Errorf("types %v, want %v", got, want)
		}
		return nil
	}, "the events of %s", id)
	return page
}

func eventTypes(events []event) []string {
	out := make([]string, len(events))
	for i, e := range events {
		out[i] = e.Type
	}
	return out
}

// The audit trail of a sequence of changes, read by the workspace and its
// managers, with includeManaged, a type filter and polling with the kept
// token; another tenant gets 404.
func TestEventsOfChangesAreListedAndPolled(t *testing.T) {
	root := asRoot(t)
	a := root.create(unique(t, "ev-a"), nil)
	asA := a.server(t)
	child := asA.create(unique(t, "ev-child"), map[string]any{"type": "CAMPUS"})
	other := root.create(unique(t, "ev-other"), nil)

	asA.do(http.MethodPut, "/api/workspace/"+child.WorkspaceID, `{"name":"Renamed","address":{"country":"US"}}`,
		"X-Request-Id", "ev-update-1").ok(nil)
	asA.delete("/api/workspace/" + child.WorkspaceID).ok(nil)
	asA.post("/api/workspace/"+child.WorkspaceID+":undelete", nil).ok(nil)

	// A delete also revokes the workspace's SDK sessions (an event of its
	// own, from the auth service): these lists keep to the changes.
	changes := func(extra ...string) url.Values {
		q := url.Values{"type": {"workspace.created", "workspace.updated", "workspace.deleted", "workspace.undeleted"}}
		for i := 0; i+1 < len(extra); i += 2 {
			q.Set(extra[i], extra[i+1])
		}
		return q
	}
	want := []string{"workspace.created", "workspace.updated", "workspace.deleted", "workspace.undeleted"}
	page := asA.waitEvents(child.WorkspaceID, changes(), want...)
	update := page.Events[1]
	if update.RequestID != "ev-update-1" || !slices.Equal(update.ChangedFields, []string{"name", "address"}) ||
		update.Actor.Type != "keyPair" || update.Actor.WorkspaceID != a.WorkspaceID || update.Actor.AppKey != a.AppKeys.Server.ConsumerKey ||
		update.Target.Type != "workspace" || update.Target.ID != child.WorkspaceID || update.WorkspaceID != child.WorkspaceID {
		t.Fatalf("update event = %+v", update)
	}
	// The workspace itself and its managers read it alike; another tenant gets 404.
	if got := eventTypes(child.server(t).events(child.WorkspaceID, changes()).Events); !slices.Equal(got, want) {
		t.Fatalf("the workspace's own view: %v, want %v", got, want)
	}
	if got := eventTypes(root.events(child.WorkspaceID, changes()).Events); !slices.Equal(got, want) {
		t.Fatalf("the root's view: %v, want %v", got, want)
	}
	other.server(t).get("/api/workspace/"+child.WorkspaceID+"/events").wantError(http.StatusNotFound, "NOT_FOUND", "")
	child.server(t).get("/api/workspace/"+a.WorkspaceID+"/events").wantError(http.StatusNotFound, "NOT_FOUND", "")
	asA.get("/api/workspace/nope-"+unique(t, "x")+"/events").wantError(http.StatusNotFound, "NOT_FOUND", "")

	// Pages of two, then polling with the kept token.
	first := asA.events(child.WorkspaceID, changes("pageSize", "2"))
	second := asA.events(child.WorkspaceID, changes("pageSize", "2", "pageToken", first.NextPageToken))
	if got := eventTypes(append(first.Events, second.Events...)); !slices.Equal(got, want) {
		t.Fatalf("two pages: %v, want %v", got, want)
	}
	kept := second.NextPageToken
	empty := asA.events(child.WorkspaceID, changes("pageSize", "2", "pageToken", kept))
	if len(empty.Events) != 0 || empty.NextPageToken != kept {
		t.Fatalf("poll with nothing new: %+v, want no events and the same token", empty)
	}
	asA.delete("/api/workspace/" + child.WorkspaceID).ok(nil)
	asA.waitEvents(child.WorkspaceID, changes("pageSize", "2", "pageToken", kept), "workspace.deleted")

	// includeManaged and the type filter (one value, and repeated).
	asA.waitEvents(a.WorkspaceID, changes("includeManaged", "true"),
		"workspace.created", "workspace.created", "workspace.updated", "workspace.deleted", "workspace.undeleted", "workspace.deleted")
	asA.waitEvents(a.WorkspaceID, url.Values{"includeManaged": {"true"}},
		"workspace.created", "workspace.created", "workspace.updated", "workspace.deleted", "workspace.sdkSessionsRevoked",
		"workspace.undeleted", "workspace.deleted", "workspace.sdkSessionsRevoked")
	asA.waitEvents(a.WorkspaceID, nil, "workspace.created")
	asA.waitEvents(a.WorkspaceID, url.Values{"includeManaged": {"true"}, "type": {"workspace.deleted"}},
		"workspace.deleted", "workspace.deleted")
	asA.waitEvents(a.WorkspaceID, url.Values{"includeManaged": {"true"}, "type": {"workspace.undeleted", "workspace.updated"}},
		"workspace.updated", "workspace.undeleted")

	// Bad input: a token of another list, an unknown type, a page size out of range.
	asA.get("/api/workspace/"+a.WorkspaceID+"/events?pageToken="+url.QueryEscape(kept)).wantError(http.StatusBadRequest, "INVALID_ARGUMENT", "pageToken")
	asA.get("/api/workspace/"+a.WorkspaceID+"/events?type=workspace.exploded").wantError(http.StatusBadRequest, "INVALID_ARGUMENT", "type")
	asA.get("/api/workspace/"+a.WorkspaceID+"/events?pageSize=0").wantError(http.StatusBadRequest, "INVALID_ARGUMENT", "pageSize")
}

// The root's trail starts with its bootstrap, by the system; a logout and a
// workspace's deletion add session revocations.
func TestEventsOfBootstrapAndSessionRevocations(t *testing.T) {
	root := asRoot(t)
	page := root.waitEventsPrefix("root", url.Values{"type": {"workspace.bootstrapped"}}, "workspace.bootstrapped")
	if b := page.Events[0]; b.Actor.Type != "system" || b.Target.ID != "root" {
		t.Fatalf("bootstrap event = %+v, want by the system, about root", b)
	}

	d := root.create(unique(t, "ev-d"), nil)
	asD := d.server(t)
	asD.login("ada@example.com", d.WorkspaceID)
	asD.do(http.MethodPost, "/api/logout/sdk", map[string]any{"email": "Ada@Example.com", "workspaceId": d.WorkspaceID},
		"X-Request-Id", "ev-logout-1").ok(nil)
	root.delete("/api/workspace/" + d.WorkspaceID).ok(nil)

	page = root.waitEvents(d.WorkspaceID, url.Values{"type": {"user.sdkSessionsRevoked", "workspace.sdkSessionsRevoked"}},
		"user.sdkSessionsRevoked", "workspace.sdkSessionsRevoked")
	logout := page.Events[0]
	if logout.Target.Type != "user" || logout.Target.ID != "ada@example.com" || logout.RequestID != "ev-logout-1" ||
		logout.Actor.WorkspaceID != d.WorkspaceID || logout.Actor.AppKey != d.AppKeys.Server.ConsumerKey {
		t.Fatalf("logout event = %+v", logout)
	}
	if revoked := page.Events[1]; revoked.Target.Type != "workspace" || revoked.Target.ID != d.WorkspaceID {
		t.Fatalf("workspace revocation event = %+v", revoked)
	}
}

// waitEventsPrefix polls until the list starts with want's types.
func (c client) waitEventsPrefix(id string, query url.Values, want ...string) eventsPage {
	c.t.Helper()
	var page eventsPage
	testenv.Eventually(c.t, eventsSettleWait, func() error {
		page = c.events(id, query)
		if got := eventTypes(page.Events); len(got) < len(want) || !slices.Equal(got[:len(want)], want) {
			return fmt.Errorf("types %v, want them to start with %v", got, want)
		}
		return nil
	}, "the events of %s", id)
	return page
}
