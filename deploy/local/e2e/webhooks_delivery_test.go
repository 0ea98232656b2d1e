package e2e

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"

	"github.com/liveproctor/workspaces/deploy/local/stack"
	"github.com/liveproctor/workspaces/pkg/testenv"
)

// hookMessage is one message a receiver got, and its answer.
type hookMessage struct {
	path   string
	header http.Header
	body   []byte
	// status is what the receiver answered; 0 when it gave no answer
	// (the caller gave up first: its timeout, or its process killed).
	status int
}

func (m hookMessage) id() string { return m.header.Get("webhook-id") }

// hookAnswer says how a receiver answers a message, the nth (from 1) with
// its webhook-id at its path: a status and a body, or 0 once it has waited
// for the caller to give up (r's context ends then).
type hookAnswer func(r *http.Request, nth int) (status int, body string)

// hookReceiver is a webhook receiver on loopback that keeps every message
// and what it answered.
type hookReceiver struct {
	srv    *httptest.Server
	answer hookAnswer
	mu     sync.Mutex
	got    []hookMessage
	seen   map[string]int // messages by path and webhook-id
	host   string         // host:port, for WEBHOOK_ALLOW_INSECURE_HOSTS
	// closing ends answers still waiting when the test ends.
	closing chan struct{}
}

// newHookReceiver returns a receiver that takes every message (200).
func newHookReceiver(t *testing.T) *hookReceiver {
	return newAnsweringReceiver(t, func(*http.Request, int) (int, string) { return http.StatusOK, "" })
}

func newAnsweringReceiver(t *testing.T, answer hookAnswer) *hookReceiver {
	t.Helper()
	rc := &hookReceiver{answer: answer, seen: map[string]int{}, closing: make(chan struct{})}
	rc.srv = httptest.NewServer(http.HandlerFunc(rc.serve))
	t.Cleanup(func() {
		close(rc.closing)
		rc.srv.Close()
	})
	rc.host = strings.TrimPrefix(rc.srv.URL, "http://")
	return rc
}

func (rc *hookReceiver) serve(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	m := hookMessage{path: r.URL.Path, header: r.Header.Clone(), body: body}
	rc.mu.Lock()
	rc.seen[m.path+" "+m.id()]++
	nth := rc.seen[m.path+" "+m.id()]
	rc.mu.Unlock()
	status, answer := rc.answer(r, nth)
	m.status = status
	rc.mu.Lock()
	rc.got = append(rc.got, m)
	rc.mu.Unlock()
	if status != 0 {
		w.WriteHeader(status)
		_, _ = io.WriteString(w, answer)
	}
}

// hold waits for r's caller to give up, or for the test's end: a receiver
// that never answers.
func (rc *hookReceiver) hold(r *http.Request) (int, string) {
	select {
	case <-r.Context().Done():
	case <-rc.closing:
	}
	return 0, ""
}

// messages returns what has come to path so far (any path when empty), in
// the order answered.
func (rc *hookReceiver) messages(path string) []hookMessage {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	var out []hookMessage
	for _, m := range rc.got {
		if path == "" || m.path == path {
			out = append(out, m)
		}
	}
	return out
}

// delivered returns the webhook-ids of the messages path answered 2xx,
// in order.
func (rc *hookReceiver) delivered(path string) []string {
	var ids []string
	for _, m := range rc.messages(path) {
		if m.status >= 200 && m.status <= 299 {
			ids = append(ids, m.id())
		}
	}
	return ids
}

// waitFor waits until check passes on what has come to path.
func (rc *hookReceiver) waitFor(t *testing.T, path string, check func([]hookMessage) error) []hookMessage {
	t.Helper()
	var got []hookMessage
	testenv.Eventually(t, 60*time.Second, func() error {
		got = rc.messages(path)
		return check(got)
	}, "the messages to %s", path)
	return got
}

// message waits for the message whose webhook-id is id, answered 2xx.
func (rc *hookReceiver) message(t *testing.T, id string) hookMessage {
	t.Helper()
	var found hookMessage
	rc.waitFor(t, "", func(got []hookMessage) error {
		for _, m := range got {
			if m.id() == id && m.status >= 200 && m.status <= 299 {
				found = m
				return nil
			}
		}
		return fmt.Errorf("%d messages, none delivered with webhook-id %s", len(got), id)
	})
	return found
}

// hookAttempt is an attempt as GET …/attempts lists it.
type hookAttempt struct {
	EventID     string `json:"eventId"`
	AttemptedAt string `json:"attemptedAt"`
	Status      int    `json:"status"`
	DurationMs  int    `json:"durationMs"`
	Response    string `json:"response"`
	Error       string `json:"error"`
}

// waitAttempts waits until check passes on the first page of a webhook's
// attempts, newest first.
func (c client) waitAttempts(id, hookID string, check func([]hookAttempt) error) []hookAttempt {
	c.t.Helper()
	var page struct {
		Attempts []hookAttempt `json:"attempts"`
	}
	testenv.Eventually(c.t, 60*time.Second, func() error {
		c.get(webhookPath(id, hookID) + "/attempts").ok(&page)
		if err := check(page.Attempts); err != nil {
			return fmt.Errorf("%w; attempts %+v", err, page.Attempts)
		}
		return nil
	}, "the attempts of webhook %s", hookID)
	return page.Attempts
}

// keyEvents creates n key pairs in the workspace id and returns the ids of
// their keyPair.created events, in the order recorded.
func (c client) keyEvents(id string, n int) []string {
	c.t.Helper()
	pairs := map[string]bool{}
	for i := range n {
		pairs[c.createKey(id, fmt.Sprintf("hook-%d", i)).AppKey] = true
	}
	var ids []string
	testenv.Eventually(c.t, eventsSettleWait, func() error {
		ids = nil
		for _, e := range c.events(id, url.Values{"type": {"keyPair.created"}}).Events {
			if pairs[e.Target.ID] {
				ids = append(ids, e.ID)
			}
		}
		if len(ids) != n {
			return fmt.Errorf("%d of %d keyPair.created events", len(ids), n)
		}
		return nil
	}, "the key pairs' events")
	slices.Sort(ids) // ids sort in the order events are recorded
	return ids
}

// verified fails the test unless m's signature verifies with secret, by
// the Standard Webhooks library, an implementation that is not ours.
func verified(t *testing.T, m hookMessage, secret string) {
	t.Helper()
	wh, err := standardwebhooks.NewWebhook(secret)
	if err != nil {
		t.Fatal(err)
	}
	if err := wh.Verify(m.body, m.header); err != nil {
		t.Fatalf("the message %s does not verify: %v (webhook-signature %q)", m.header.Get("webhook-id"), err, m.header.Get("webhook-signature"))
	}
}

// A receiver on loopback (named in WEBHOOK_ALLOW_INSECURE_HOSTS, on a stack
// of its own) gets a test message and the events its filter admits, each
// the event as the feed shows it, signed with the secret the create
// showed; during a rotation's overlap both secrets verify; the attempts
// list what was sent.
func TestWebhookDeliveryEndToEnd(t *testing.T) {
	rc := newHookReceiver(t)
	s := startOwnStack(t, "WEBHOOK_ALLOW_INSECURE_HOSTS="+rc.host)
	w := asRoot(t).on(s).create(unique(t, "w"), nil)
	self := w.server(t).on(s)
	id := w.WorkspaceID
	hook := self.addWebhook(id, map[string]any{"url": rc.srv.URL + "/hook", "eventTypes": []string{"keyPair.created", "webhook.secretRotated"}})

	var tested struct {
		EventID string `json:"eventId"`
	}
	self.post(webhookPath(id, hook.ID)+":test", map[string]any{}).wantStatus(http.StatusAccepted).decode(&tested)
	m := rc.message(t, tested.EventID)
	verified(t, m, hook.Secret)
	var test event
	if err := json.Unmarshal(m.body, &test); err != nil || test.Type != "webhook.test" || test.ID != tested.EventID ||
		test.Target.Type != "webhook" || test.Target.ID != hook.ID || m.header.Get("Content-Type") != "application/json" {
		t.Fatalf("the test message: %s (%v)", m.body, err)
	}

	// An event the filter admits arrives as the feed shows it.
	k := self.createKey(id, "ci")
	var listed map[string]any
	testenv.Eventually(t, eventsSettleWait, func() error {
		var page struct {
			Events []map[string]any `json:"events"`
		}
		self.get("/api/workspace/" + id + "/events?type=keyPair.created").ok(&page)
		for _, e := range page.Events {
			if target, _ := e["target"].(map[string]any); target["id"] == k.AppKey {
				listed = e
				return nil
			}
		}
		return fmt.Errorf("no keyPair.created of %s yet", k.AppKey)
	}, "the key pair's event")
	m = rc.message(t, listed["id"].(string))
	verified(t, m, hook.Secret)
	var delivered map[string]any
	if err := json.Unmarshal(m.body, &delivered); err != nil || !reflect.DeepEqual(delivered, listed) {
		t.Fatalf("delivered %s, the feed shows %v (%v)", m.body, listed, err)
	}

	// During the overlap, a message carries both signatures.
	var rotated struct {
		Secret string `json:"secret"`
	}
	self.post(webhookPath(id, hook.ID)+":rotateSecret", map[string]any{}).ok(&rotated)
	rotation := self.waitEvents(id, url.Values{"type": {"webhook.secretRotated"}}, "webhook.secretRotated").Events[0]
	m = rc.message(t, rotation.ID)
	verified(t, m, rotated.Secret)
	verified(t, m, hook.Secret)
	if n := len(strings.Fields(m.header.Get("webhook-signature"))); n != 2 {
		t.Fatalf("%d signatures during the overlap: %q", n, m.header.Get("webhook-signature"))
	}

	// The attempts list what was sent, newest first.
	self.waitAttempts(id, hook.ID, func(attempts []hookAttempt) error {
		if len(attempts) < 3 || attempts[0].EventID != rotation.ID || attempts[0].Status != http.StatusOK {
			return errors.New("want the rotation's delivery first, and the two before it")
		}
		return nil
	})
}

// Resend sends one event again; recover sends again, in order, the events
// the filter admits from an event (that one included) or from a time, up
// to where live delivery stood when it was asked (live delivery has the
// rest). Each message has the event's webhook-id and is signed as live
// ones are.
func TestWebhookResendAndRecover(t *testing.T) {
	rc := newHookReceiver(t)
	s := startOwnStack(t, "WEBHOOK_ALLOW_INSECURE_HOSTS="+rc.host)
	w := asRoot(t).on(s).create(unique(t, "w"), nil)
	self := w.server(t).on(s)
	id := w.WorkspaceID
	since := time.Now().UTC().Add(-time.Second)
	byID := self.addWebhook(id, map[string]any{"url": rc.srv.URL + "/by-id", "eventTypes": []string{"keyPair.created"}})
	byTime := self.addWebhook(id, map[string]any{"url": rc.srv.URL + "/by-time", "eventTypes": []string{"keyPair.created"}})
	events := self.keyEvents(id, 4)
	// The fourth event delivered, live delivery stands past the third.
	for _, path := range []string{"/by-id", "/by-time"} {
		waitDelivered(t, rc, path, events)
	}

	self.post(webhookPath(id, byID.ID)+":resend", map[string]any{"eventId": events[0]}).wantStatus(http.StatusAccepted)
	waitDelivered(t, rc, "/by-id", append(slices.Clone(events), events[0]))

	self.post(webhookPath(id, byID.ID)+":recover", map[string]any{"since": events[1]}).wantStatus(http.StatusAccepted)
	wantRecovered(t, rc, "/by-id", 5, events[1:])
	self.post(webhookPath(id, byTime.ID)+":recover", map[string]any{"since": since.Format(time.RFC3339Nano)}).wantStatus(http.StatusAccepted)
	wantRecovered(t, rc, "/by-time", 4, events)

	for _, m := range rc.messages("/by-id") {
		verified(t, m, byID.Secret)
	}
	for _, m := range rc.messages("/by-time") {
		verified(t, m, byTime.Secret)
	}
}

// waitDelivered waits until path has been delivered want, in order, and
// nothing else.
func waitDelivered(t *testing.T, rc *hookReceiver, path string, want []string) {
	t.Helper()
	rc.waitFor(t, path, func([]hookMessage) error {
		if got := rc.delivered(path); !slices.Equal(got, want) {
			return fmt.Errorf("delivered %v, want %v", got, want)
		}
		return nil
	})
}

// wantRecovered waits until a recovery has sent path, after its first n
// messages, the events of want but the last at least, in order: the last
// comes too if live delivery had settled it when the recovery was asked.
func wantRecovered(t *testing.T, rc *hookReceiver, path string, n int, want []string) {
	t.Helper()
	rc.waitFor(t, path, func([]hookMessage) error {
		got := rc.delivered(path)[n:]
		if len(got) < len(want)-1 || len(got) > len(want) || !slices.Equal(got, want[:len(got)]) {
			return fmt.Errorf("recovered %v, want %v (the last one or not)", got, want)
		}
		return nil
	})
}

// The receiver the README shows (webhooks_receiver_example_test.go, which
// the README quotes whole) hands each change on once, and drops older news:
// a webhook turned off and on again misses the change made meanwhile, and
// a recovery sends it after a later change to the same workspace. A
// resend and the recovery's repeats are dropped too.
func TestWebhookReceiverOfTheREADME(t *testing.T) {
	root, err := stack.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	example, err := os.ReadFile("webhooks_receiver_example_test.go")
	if err != nil {
		t.Fatal(err)
	}
	readme, err := os.ReadFile(filepath.Join(root, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, code, _ := strings.Cut(string(example), "package e2e\n\n")
	if !strings.Contains(string(readme), "```go\n"+code+"```\n") {
		t.Fatal("the README's receiver is not webhooks_receiver_example_test.go's code, from its imports on")
	}

	var mu sync.Mutex
	var receiver http.Handler
	seen := map[string]int{} // messages taken, by webhook-id
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		h := receiver
		mu.Unlock()
		if h == nil {
			w.WriteHeader(http.StatusServiceUnavailable)
			return
		}
		h.ServeHTTP(w, r)
		mu.Lock()
		seen[r.Header.Get("webhook-id")]++
		mu.Unlock()
	}))
	t.Cleanup(srv.Close)
	s := startOwnStack(t, "WEBHOOK_ALLOW_INSECURE_HOSTS="+strings.TrimPrefix(srv.URL, "http://"))
	w := asRoot(t).on(s).create(unique(t, "w"), nil)
	self := w.server(t).on(s)
	id := w.WorkspaceID
	hook := self.addWebhook(id, map[string]any{"url": srv.URL + "/hook", "eventTypes": []string{"workspace.updated"}})
	rc, err := NewReceiver(hook.Secret)
	if err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	receiver = rc
	mu.Unlock()

	var handed, renames []string
	rename := func(name string) string {
		asRoot(t).on(s).put("/api/workspace/"+id, map[string]any{"name": name}).ok(nil) // its manager's change
		testenv.Eventually(t, eventsSettleWait, func() error {
			page := self.events(id, url.Values{"type": {"workspace.updated"}})
			if len(page.Events) == len(renames) {
				return errors.New("no new workspace.updated")
			}
			renames = append(renames, page.Events[len(page.Events)-1].ID)
			return nil
		}, "the rename to %s", name)
		return renames[len(renames)-1]
	}
	next := func() string {
		select {
		case e := <-rc.Events:
			handed = append(handed, e.ID)
			return e.ID
		case <-time.After(30 * time.Second):
			t.Fatalf("nothing handed on after %v", handed)
			return ""
		}
	}
	taken := func(id string) int {
		mu.Lock()
		defer mu.Unlock()
		return seen[id]
	}

	if e1 := rename("One"); next() != e1 {
		t.Fatalf("handed on %v, want %s", handed, e1)
	}
	self.patch(webhookPath(id, hook.ID), map[string]any{"enabled": false}).ok(nil)
	e2 := rename("Two")
	self.patch(webhookPath(id, hook.ID), map[string]any{"enabled": true}).ok(nil)
	e3 := rename("Three")
	if next() != e3 {
		t.Fatalf("handed on %v, want %s after the one before the pause", handed, e3)
	}
	// A fourth delivered: live delivery stands past the third.
	if e4 := rename("Four"); next() != e4 {
		t.Fatalf("handed on %v, want %s last", handed, e4)
	}
	self.post(webhookPath(id, hook.ID)+":resend", map[string]any{"eventId": handed[0]}).wantStatus(http.StatusAccepted)
	self.post(webhookPath(id, hook.ID)+":recover", map[string]any{"since": handed[0]}).wantStatus(http.StatusAccepted)
	testenv.Eventually(t, time.Minute, func() error {
		if taken(handed[0]) < 3 || taken(e2) < 1 || taken(e3) < 2 {
			return fmt.Errorf("taken %d, %d, %d times", taken(handed[0]), taken(e2), taken(e3))
		}
		return nil
	}, "the resend and the recovery")
	select {
	case e := <-rc.Events:
		t.Fatalf("after %v, %s handed on: a repeat, or older news", handed, e.ID)
	default:
	}
}
