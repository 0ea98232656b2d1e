package e2e

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"

	"github.com/liveproctor/workspaces/pkg/testenv"
)

// hookMessage is one message a receiver got.
type hookMessage struct {
	header http.Header
	body   []byte
}

// hookReceiver is a webhook receiver on loopback that takes every message
// (200) and keeps it.
type hookReceiver struct {
	srv  *httptest.Server
	mu   sync.Mutex
	got  []hookMessage
	host string // host:port, for WEBHOOK_ALLOW_INSECURE_HOSTS
}

func newHookReceiver(t *testing.T) *hookReceiver {
	t.Helper()
	rc := &hookReceiver{}
	rc.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		rc.mu.Lock()
		rc.got = append(rc.got, hookMessage{header: r.Header.Clone(), body: body})
		rc.mu.Unlock()
		w.WriteHeader(http.StatusOK)
	}))
	t.Cleanup(rc.srv.Close)
	rc.host = strings.TrimPrefix(rc.srv.URL, "http://")
	return rc
}

// message waits for the message whose webhook-id is id.
func (rc *hookReceiver) message(t *testing.T, id string) hookMessage {
	t.Helper()
	var found hookMessage
	testenv.Eventually(t, 30*time.Second, func() error {
		rc.mu.Lock()
		defer rc.mu.Unlock()
		for _, m := range rc.got {
			if m.header.Get("webhook-id") == id {
				found = m
				return nil
			}
		}
		return fmt.Errorf("%d messages, none with webhook-id %s", len(rc.got), id)
	}, "the webhook message %s", id)
	return found
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
	var attempts struct {
		Attempts []struct {
			EventID string `json:"eventId"`
			Status  int    `json:"status"`
		} `json:"attempts"`
	}
	testenv.Eventually(t, 30*time.Second, func() error {
		self.get(webhookPath(id, hook.ID) + "/attempts").ok(&attempts)
		if len(attempts.Attempts) < 3 || attempts.Attempts[0].EventID != rotation.ID || attempts.Attempts[0].Status != http.StatusOK {
			return fmt.Errorf("attempts %+v", attempts.Attempts)
		}
		return nil
	}, "the attempts")
}
