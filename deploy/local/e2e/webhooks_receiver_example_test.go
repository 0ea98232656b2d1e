package e2e

import (
	"encoding/json"
	"io"
	"net/http"
	"sync"

	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"
)

// Receiver takes the messages of one webhook. It verifies each, answers
// at once (the work is done off the request, from Events), and hands an
// event on once, and only if it is newer than the last one handed on
// about the same target.
type Receiver struct {
	Events chan Event
	hook   *standardwebhooks.Webhook
	mu     sync.Mutex
	// latest is the last webhook-id handed on, by target. Keep it in your
	// database: a message may come again (a retry, a resend, a recovery)
	// with the same webhook-id.
	latest map[string]string
}

// Event is what the receiver reads of an event; the body is the event as
// GET /api/workspace/{id}/events shows it.
type Event struct {
	ID     string `json:"id"`
	Type   string `json:"type"`
	Target struct {
		Type string `json:"type"`
		ID   string `json:"id"`
	} `json:"target"`
}

// NewReceiver verifies messages with secret, the whsec_… of the
// webhook's create (or of its latest rotation).
func NewReceiver(secret string) (*Receiver, error) {
	hook, err := standardwebhooks.NewWebhook(secret)
	if err != nil {
		return nil, err
	}
	return &Receiver{Events: make(chan Event, 1024), hook: hook, latest: map[string]string{}}, nil
}

func (rc *Receiver) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, 1<<20))
	if err != nil {
		w.WriteHeader(http.StatusRequestEntityTooLarge)
		return
	}
	// The signature (either one, during a rotation's overlap) and a
	// webhook-timestamp within five minutes.
	if err := rc.hook.Verify(body, r.Header); err != nil {
		w.WriteHeader(http.StatusUnauthorized)
		return
	}
	var e Event
	if err := json.Unmarshal(body, &e); err != nil {
		w.WriteHeader(http.StatusBadRequest)
		return
	}
	// A webhook-id is its event's id, and ids sort in the order events
	// were recorded: one not above the last handed on about the same
	// target is a repeat, or older news (a recovery's), taken but not
	// handed on.
	id, target := r.Header.Get("webhook-id"), e.Target.Type+"/"+e.Target.ID
	rc.mu.Lock()
	fresh := id > rc.latest[target]
	if fresh {
		rc.latest[target] = id
	}
	rc.mu.Unlock()
	if fresh {
		rc.Events <- e
	}
	// 2xx within 15 s, or the message is sent again; 410 turns the
	// webhook off.
	w.WriteHeader(http.StatusNoContent)
}
