package e2e

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"os"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
)

// retryEnv is the settings of a stack whose deliveries fail: a retry
// schedule of seconds (four attempts) and attempts cut after 3 s (half
// the lease).
var retryEnv = []string{"WEBHOOK_RETRY_SCHEDULE=1s,1s,1s", "WEBHOOK_LEASE=6s"}

// One event, four receivers that fail each their way: one answers 500
// twice, then 200; one answers 410 Gone; one lets the first attempt run
// past its timeout; one answers 503 to every attempt. Each is retried
// with the same webhook-id and signed every time, the attempts say what
// happened, and the 410 and the last attempt are in the audit trail.
func TestWebhookFailuresAreRetried(t *testing.T) {
	var rc *hookReceiver
	rc = newAnsweringReceiver(t, func(r *http.Request, nth int) (int, string) {
		switch r.URL.Path {
		case "/flaky":
			if nth <= 2 {
				return http.StatusInternalServerError, fmt.Sprintf("not yet (%d)", nth)
			}
		case "/gone":
			return http.StatusGone, "gone for good"
		case "/slow":
			if nth == 1 {
				return rc.hold(r)
			}
		case "/down":
			return http.StatusServiceUnavailable, "down"
		}
		return http.StatusOK, "thanks"
	})
	s := startOwnStack(t, append([]string{"WEBHOOK_ALLOW_INSECURE_HOSTS=" + rc.host}, retryEnv...)...)
	w := asRoot(t).on(s).create(unique(t, "w"), nil)
	self := w.server(t).on(s)
	id := w.WorkspaceID
	hooks := map[string]webhook{}
	for _, path := range []string{"/flaky", "/gone", "/slow", "/down"} {
		hooks[path] = self.addWebhook(id, map[string]any{"url": rc.srv.URL + path, "eventTypes": []string{"keyPair.created"}})
	}
	e := self.keyEvents(id, 1)[0]

	// 500, 500, 200: three messages, one webhook-id, each signed.
	flaky := rc.waitFor(t, "/flaky", func(got []hookMessage) error {
		if len(got) < 3 {
			return fmt.Errorf("%d messages", len(got))
		}
		return nil
	})
	for i, m := range flaky {
		verified(t, m, hooks["/flaky"].Secret)
		if m.id() != e || m.status != []int{500, 500, 200}[i] {
			t.Fatalf("message %d to /flaky: webhook-id %s answered %d; want %s, 500, 500, 200", i, m.id(), m.status, e)
		}
	}
	self.waitAttempts(id, hooks["/flaky"].ID, func(attempts []hookAttempt) error {
		return wantAttempts(attempts, e, []int{200, 500, 500}, []string{"thanks", "not yet (2)", "not yet (1)"})
	})

	// 410: one attempt, the webhook disabled with the reason, which the
	// trail records.
	gone := hooks["/gone"]
	self.waitAttempts(id, gone.ID, func(attempts []hookAttempt) error {
		return wantAttempts(attempts, e, []int{410}, []string{"gone for good"})
	})
	var disabled webhook
	self.get(webhookPath(id, gone.ID)).ok(&disabled)
	if disabled.Enabled || !strings.Contains(disabled.DisabledReason, "410") {
		t.Fatalf("after a 410: %+v, want disabled with the reason", disabled)
	}
	trail := self.waitEvents(id, url.Values{"type": {"webhook.disabled"}}, "webhook.disabled").Events[0]
	if trail.Target.ID != gone.ID || trail.Actor.Type != "system" {
		t.Fatalf("webhook.disabled: %+v", trail)
	}
	if raw := self.rawEvent(id, trail.ID, "webhook.disabled"); raw["reason"] != disabled.DisabledReason {
		t.Fatalf("webhook.disabled's reason %v, the webhook's %q", raw["reason"], disabled.DisabledReason)
	}

	// Past the timeout: no answer, recorded as such, and retried.
	slow := rc.waitFor(t, "/slow", func(got []hookMessage) error {
		if len(got) < 2 {
			return fmt.Errorf("%d messages", len(got))
		}
		return nil
	})
	if slow[0].id() != e || slow[1].id() != e || slow[0].status != 0 || slow[1].status != 200 {
		t.Fatalf("to /slow: %s unanswered then %s answered %d; want %s twice", slow[0].id(), slow[1].id(), slow[1].status, e)
	}
	verified(t, slow[1], hooks["/slow"].Secret)
	attempts := self.waitAttempts(id, hooks["/slow"].ID, func(attempts []hookAttempt) error {
		return wantAttempts(attempts, e, []int{200, 0}, []string{"thanks", ""})
	})
	if attempts[1].Error != "no answer within the timeout" {
		t.Fatalf("the attempt past the timeout: %+v", attempts[1])
	}

	// Every attempt fails: four, then the event is given up on, which
	// the trail records; the webhook stays on.
	down := hooks["/down"]
	self.waitAttempts(id, down.ID, func(attempts []hookAttempt) error {
		return wantAttempts(attempts, e, []int{503, 503, 503, 503}, []string{"down", "down", "down", "down"})
	})
	exhausted := self.waitEvents(id, url.Values{"type": {"webhook.attemptsExhausted"}}, "webhook.attemptsExhausted").Events[0]
	if raw := self.rawEvent(id, exhausted.ID, "webhook.attemptsExhausted"); exhausted.Target.ID != down.ID || raw["eventId"] != e {
		t.Fatalf("webhook.attemptsExhausted: %v, want the webhook %s and the event %s", raw, down.ID, e)
	}
	self.get(webhookPath(id, down.ID)).ok(&disabled)
	if !disabled.Enabled {
		t.Fatalf("given up on an event, the webhook is off: %+v", disabled)
	}
	if n := len(rc.messages("/down")); n != 4 {
		t.Fatalf("/down got %d messages, want 4", n)
	}
}

// rawEvent returns the event eventID of type typ in the trail of the
// workspace id, as JSON: with the fields only some types have.
func (c client) rawEvent(id, eventID, typ string) map[string]any {
	c.t.Helper()
	var page struct {
		Events []map[string]any `json:"events"`
	}
	c.get("/api/workspace/" + id + "/events?type=" + typ).ok(&page)
	for _, e := range page.Events {
		if e["id"] == eventID {
			return e
		}
	}
	c.t.Fatalf("no %s event %s in the trail of %s", typ, eventID, id)
	return nil
}

// wantAttempts checks attempts (newest first) against the statuses and
// the answers' bodies, all of the event e.
func wantAttempts(attempts []hookAttempt, e string, statuses []int, responses []string) error {
	var got []int
	for _, a := range attempts {
		got = append(got, a.Status)
	}
	if !slices.Equal(got, statuses) {
		return fmt.Errorf("statuses %v, want %v", got, statuses)
	}
	for i, a := range attempts {
		if a.EventID != e || a.Response != responses[i] || !timePattern.MatchString(a.AttemptedAt) || a.DurationMs < 0 ||
			(a.Status == 0) != (a.Error != "") {
			return errors.New("want each of the event, with the answer's body, an error only without an answer")
		}
	}
	return nil
}

// A webhook's URL is checked when it is stored and again when it is
// called. WEBHOOK_ALLOW_INSECURE_HOSTS admits the host:port it names and
// nothing else: the same address on another port, or under another
// spelling, is refused at create (400). A host name that resolves to that
// address passes the create (where a name resolves is not known then) and
// is refused when connecting: the attempt is recorded with an error, and
// the receiver, listening there, sees no connection.
func TestWebhookPrivateAddressRefusedAtCreateAndDial(t *testing.T) {
	name, addr := loopbackName(t)
	var conns atomic.Int64
	rc := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	ln, err := net.Listen("tcp", net.JoinHostPort(addr.String(), "0"))
	if err != nil {
		t.Fatal(err)
	}
	rc.Listener = ln
	rc.Config.ConnState = func(_ net.Conn, state http.ConnState) {
		if state == http.StateNew {
			conns.Add(1)
		}
	}
	rc.StartTLS()
	t.Cleanup(rc.Close)
	allowed := ln.Addr().String()
	_, port, _ := net.SplitHostPort(allowed)
	s := startOwnStack(t, "WEBHOOK_ALLOW_INSECURE_HOSTS="+allowed)
	w := asRoot(t).on(s).create(unique(t, "w"), nil)
	self := w.server(t).on(s)
	id := w.WorkspaceID

	for _, refused := range []string{
		"https://" + net.JoinHostPort(addr.String(), "1") + "/hook",
		"https://localhost:" + port + "/hook",
		"https://LocalHost.:" + port + "/hook",
		"https://[::1]:" + port + "/hook",
		"https://[::ffff:127.0.0.1]:" + port + "/hook",
		"https://127.0.0.2:" + port + "/hook",
	} {
		self.post(webhooksPath(id), map[string]any{"url": refused}).wantError(http.StatusBadRequest, "INVALID_ARGUMENT", "url")
	}

	hook := self.addWebhook(id, map[string]any{"url": "https://" + net.JoinHostPort(name, port) + "/hook"})
	self.post(webhookPath(id, hook.ID)+":test", map[string]any{}).wantStatus(http.StatusAccepted)
	attempts := self.waitAttempts(id, hook.ID, func(attempts []hookAttempt) error {
		if len(attempts) == 0 {
			return errors.New("no attempt yet")
		}
		return nil
	})
	if a := attempts[0]; a.Status != 0 || a.Error != "the host could not be reached" {
		t.Fatalf("the attempt to %s: %+v, want no answer, the host not reached (in words that name no address)", name, a)
	}
	if n := conns.Load(); n != 0 {
		t.Fatalf("the receiver at %s saw %d connections, want none", allowed, n)
	}
}

// loopbackName returns a host name that resolves here to loopback
// addresses only, and is not localhost (refused by its name): the
// machine's own name, or another /etc/hosts gives a loopback address; and
// the first address it resolves to. No such name: the test is skipped.
func loopbackName(t *testing.T) (string, netip.Addr) {
	t.Helper()
	var names []string
	if host, err := os.Hostname(); err == nil {
		names = append(names, host)
	}
	if hosts, err := os.ReadFile("/etc/hosts"); err == nil {
		for line := range strings.SplitSeq(string(hosts), "\n") {
			line, _, _ = strings.Cut(line, "#")
			if fields := strings.Fields(line); len(fields) > 1 {
				names = append(names, fields[1:]...)
			}
		}
	}
	for _, name := range names {
		plain := strings.TrimSuffix(strings.ToLower(name), ".")
		if plain == "localhost" || strings.HasSuffix(plain, ".localhost") {
			continue
		}
		addrs, err := net.DefaultResolver.LookupNetIP(context.Background(), "ip", name)
		if err == nil && len(addrs) > 0 && !slices.ContainsFunc(addrs, func(a netip.Addr) bool { return !a.Unmap().IsLoopback() }) {
			return name, addrs[0].Unmap()
		}
	}
	t.Skip("no name but localhost resolves to a loopback address here (the machine's name, or /etc/hosts)")
	return "", netip.Addr{}
}
