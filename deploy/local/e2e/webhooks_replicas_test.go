package e2e

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/liveproctor/workspaces/deploy/local/stack"
)

// The workspace service killed while its receiver holds the first of
// several events: nothing was recorded, and once the lease has run out
// the replica that replaces it sends that event again, with the same
// webhook-id, then every later one, in the order recorded.
func TestWebhookDeliveryOutlivesAKilledReplica(t *testing.T) {
	held := make(chan struct{})
	var once sync.Once
	var rc *hookReceiver
	rc = newAnsweringReceiver(t, func(r *http.Request, nth int) (int, string) {
		first := false
		once.Do(func() { first = true })
		if first {
			close(held)
			return rc.hold(r)
		}
		return http.StatusOK, ""
	})
	// One replica, in a stack that can start another; an attempt may
	// take 6 s (half the lease), time enough to kill its replica.
	s := startOwnStackWith(t, stack.Options{Replicas: stack.Replicas{Workspace: 1}},
		"WEBHOOK_ALLOW_INSECURE_HOSTS="+rc.host, "WEBHOOK_LEASE=12s")
	w := asRoot(t).on(s).create(unique(t, "w"), nil)
	self := w.server(t).on(s)
	id := w.WorkspaceID
	hook := self.addWebhook(id, map[string]any{"url": rc.srv.URL + "/hook", "eventTypes": []string{"keyPair.created"}})
	events := self.keyEvents(id, 4)

	select {
	case <-held:
	case <-time.After(30 * time.Second):
		t.Fatal("no message came to be held")
	}
	if err := s.KillReplica(s.Replicas("workspace")[0]); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if _, err := s.AddReplica(ctx, "workspace"); err != nil {
		t.Fatal(err)
	}

	got := rc.waitFor(t, "/hook", func(got []hookMessage) error {
		if n := len(rc.delivered("/hook")); n < len(events) {
			return fmt.Errorf("%d of %d events delivered", n, len(events))
		}
		return nil
	})
	if got[0].status != 0 || got[0].id() != events[0] {
		t.Fatalf("the held message: %s answered %d, want %s unanswered", got[0].id(), got[0].status, events[0])
	}
	if ids := rc.delivered("/hook"); !slices.Equal(ids, events) {
		t.Fatalf("delivered %v, want %v: each event once, in the order recorded", ids, events)
	}
	for _, m := range got {
		verified(t, m, hook.Secret)
	}
	// The killed replica recorded nothing: one attempt per event.
	self.waitAttempts(id, hook.ID, func(attempts []hookAttempt) error {
		var ids []string
		for _, a := range slices.Backward(attempts) {
			if a.Status != http.StatusOK {
				return fmt.Errorf("an attempt answered %d", a.Status)
			}
			ids = append(ids, a.EventID)
		}
		if !slices.Equal(ids, events) {
			return fmt.Errorf("attempts of %v, want one of each of %v", ids, events)
		}
		return nil
	})
}

// Two replicas of the workspace service share the deliveries, each taking
// one at a time: while the first message is held, another webhook's
// message comes, from the other replica. Every event reaches every
// webhook once, in order.
func TestWebhookReplicasDeliverEachEventOnce(t *testing.T) {
	overlapped := make(chan struct{})
	var once, overlap sync.Once
	var rc *hookReceiver
	rc = newAnsweringReceiver(t, func(r *http.Request, nth int) (int, string) {
		first := false
		once.Do(func() { first = true })
		if !first {
			overlap.Do(func() { close(overlapped) })
			return http.StatusOK, ""
		}
		select { // the first message waits for one to another webhook
		case <-overlapped:
			return http.StatusOK, ""
		case <-r.Context().Done():
			return 0, ""
		}
	})
	s := startOwnStackWith(t, stack.Options{Replicas: stack.Replicas{Workspace: 2}},
		"WEBHOOK_ALLOW_INSECURE_HOSTS="+rc.host, "WEBHOOK_WORKERS=1", "WEBHOOK_LEASE=12s")
	w := asRoot(t).on(s).create(unique(t, "w"), nil)
	self := w.server(t).on(s)
	id := w.WorkspaceID
	paths := []string{"/a", "/b", "/c"}
	hooks := map[string]webhook{}
	for _, path := range paths {
		hooks[path] = self.addWebhook(id, map[string]any{"url": rc.srv.URL + path, "eventTypes": []string{"keyPair.created"}})
	}
	events := self.keyEvents(id, 8)

	for _, path := range paths {
		rc.waitFor(t, path, func([]hookMessage) error {
			if n := len(rc.delivered(path)); n < len(events) {
				return fmt.Errorf("%d of %d events delivered", n, len(events))
			}
			return nil
		})
	}
	for _, m := range rc.messages("") {
		if m.status == 0 {
			t.Fatalf("the first message (%s to %s) was not answered: no other replica delivered while it was held", m.id(), m.path)
		}
		verified(t, m, hooks[m.path].Secret)
	}
	for _, path := range paths {
		if ids := rc.delivered(path); !slices.Equal(ids, events) {
			t.Errorf("%s got %v, want %v: each event once, in the order recorded", path, ids, events)
		}
	}
}
