// Package cachebus tells every replica of every service, within about a
// second, that something it may have cached has changed: a key pair was
// revoked, rotated or swept, a workspace was deleted or its rate limit
// changed. It runs over the Redis the services already share: a change is
// one PUBLISH on one channel (Publish), and each replica runs a subscriber
// loop (Run) that hands every change to its caches.
//
// Redis pub/sub keeps nothing: a subscriber that is not connected when a
// change is published never hears it. So Run tells its handler Lost
// whenever a change may have gone by unheard, and the handler drops its
// caches whole; while Redis is unreachable, the caches' own TTLs are the
// bound again.
//
// It works on a single Redis, through Sentinel, and on a Cluster, which
// forwards a classic PUBLISH to the subscribers of every node.
package cachebus

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/redis/go-redis/v9"
)

// Channel is the one channel every change is published on.
const Channel = "cachebus:changes"

// Kind says what changed.
type Kind string

const (
	// KeyPairsChanged: the key pairs AppKeys of the workspace were revoked,
	// rotated or removed as expired.
	KeyPairsChanged Kind = "keyPairs"
	// WorkspaceChanged: the workspace was deleted or undeleted, or its rate
	// limit changed; AppKeys are all its key pairs, so that a replica drops
	// what it holds about them without reading the workspace.
	WorkspaceChanged Kind = "workspace"
)

// Change is one message on the bus. App keys are the public half of key
// pairs; no secret ever rides on it.
type Change struct {
	Kind        Kind     `json:"kind"`
	WorkspaceID string   `json:"workspaceId"`
	AppKeys     []string `json:"appKeys,omitempty"`
}

// valid reports whether a change received can be acted on.
func (c Change) valid() bool {
	return (c.Kind == KeyPairsChanged || c.Kind == WorkspaceChanged) && c.WorkspaceID != ""
}

// Publish sends c to every replica subscribed now: one PUBLISH.
func Publish(ctx context.Context, client redis.UniversalClient, c Change) error {
	payload, err := json.Marshal(c)
	if err != nil {
		return err
	}
	if err := client.Publish(ctx, Channel, payload).Err(); err != nil {
		return fmt.Errorf("publish a cache invalidation: %w", err)
	}
	return nil
}

// Handler is what a replica does with the bus. Run calls it from one
// goroutine, one call at a time; each call should be quick (dropping cache
// entries).
type Handler interface {
	// Changed drops what the replica cached about the change.
	Changed(Change)
	// Lost drops everything the replica caches that a change would have
	// dropped: changes may have gone by unheard.
	Lost()
}

const (
	// pingInterval is how long a subscription may be silent before it is
	// sent a PING, and then how long the PING may go unanswered before the
	// connection is taken for dead (a peer that vanished without closing
	// it, a Redis that hangs).
	pingInterval = time.Second
	// firstRetry is the wait before subscribing again after a failure; it
	// doubles up to maxRetry while Redis stays unreachable.
	firstRetry = 100 * time.Millisecond
	maxRetry   = time.Second
)

// errSilent is a connection whose PING went unanswered.
var errSilent = errors.New("no answer to PING")

// Run subscribes to the bus and hands h every change, until ctx ends. It
// calls h.Lost each time the subscription is made (the first included:
// what was cached before it existed may have missed a change) and when it
// breaks, and subscribes again, waiting up to a second between tries. A
// message that is not a change is ignored (logged once, without its
// content).
func Run(ctx context.Context, client redis.UniversalClient, h Handler, logger *slog.Logger) {
	s := &subscriber{handler: h, logger: logger}
	wait := firstRetry
	for {
		subscribed, err := s.listen(ctx, client)
		if ctx.Err() != nil {
			return
		}
		switch {
		case subscribed:
			h.Lost()
			logger.Warn("the cache invalidation subscription broke: caches dropped, subscribing again; until then they hold entries for their TTLs",
				"error", err.Error())
			wait = firstRetry
		case !s.failing:
			logger.Warn("cannot subscribe to cache invalidations, retrying; meanwhile caches hold entries for their TTLs", "error", err.Error())
		}
		s.failing = true
		select {
		case <-ctx.Done():
			return
		case <-time.After(wait):
		}
		wait = min(2*wait, maxRetry)
	}
}

// subscriber is Run's state.
type subscriber struct {
	handler Handler
	logger  *slog.Logger
	// failing: the last subscription broke or was never made, and no
	// subscription has been made since.
	failing bool
	// warnedMalformed: a malformed message was logged already.
	warnedMalformed bool
}

// listen subscribes and hands over changes until the subscription fails
// or ctx ends; it reports whether the subscription was made.
func (s *subscriber) listen(ctx context.Context, client redis.UniversalClient) (subscribed bool, err error) {
	sub := client.Subscribe(ctx, Channel) // a failure shows at the first Receive
	heard := make(chan struct{}, 1)
	watchCtx, stopWatch := context.WithCancel(ctx)
	closed := make(chan error, 1)
	go func() { closed <- watchSilence(watchCtx, sub, heard) }()
	defer func() {
		stopWatch()
		if why := <-closed; why != nil {
			err = why // what Receive saw was the close
		}
	}()
	for {
		msg, err := sub.Receive(ctx)
		if err != nil {
			return subscribed, err
		}
		select {
		case heard <- struct{}{}:
		default:
		}
		switch m := msg.(type) {
		case *redis.Subscription:
			if m.Kind == "subscribe" {
				subscribed = true
				s.handler.Lost()
				if s.failing {
					s.logger.Info("subscribed to cache invalidations")
					s.failing = false
				}
			}
		case *redis.Message:
			s.deliver(m.Payload)
		}
	}
}

// deliver hands the change in payload to the handler, or ignores it.
func (s *subscriber) deliver(payload string) {
	var c Change
	if err := json.Unmarshal([]byte(payload), &c); err != nil || !c.valid() {
		if !s.warnedMalformed {
			s.warnedMalformed = true
			s.logger.Warn("ignored a message on the cache invalidation channel that is not a change (further ones are ignored silently)",
				"channel", Channel, "bytes", len(payload))
		}
		return
	}
	s.handler.Changed(c)
}

// watchSilence closes sub when ctx ends, or when sub has been silent for
// pingInterval and then has not answered a PING within pingInterval, so
// that a Receive blocked on it returns; it returns why, or nil when ctx
// ended. Anything received (on heard) counts as an answer.
func watchSilence(ctx context.Context, sub *redis.PubSub, heard <-chan struct{}) error {
	defer func() { _ = sub.Close() }()
	timer := time.NewTimer(pingInterval)
	defer timer.Stop()
	pinged := false
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-heard:
			pinged = false
		case <-timer.C:
			if pinged {
				return errSilent
			}
			pingCtx, cancel := context.WithTimeout(ctx, pingInterval)
			err := sub.Ping(pingCtx)
			cancel()
			if ctx.Err() != nil {
				return nil
			}
			if err != nil {
				return fmt.Errorf("PING: %w", err)
			}
			pinged = true
		}
		timer.Reset(pingInterval)
	}
}

// Subscribers returns how many subscriptions to the bus the Redis server
// behind client counts now (on a Cluster, those of the node it asks): one
// per replica listening.
func Subscribers(ctx context.Context, client redis.UniversalClient) (int64, error) {
	n, err := client.PubSubNumSub(ctx, Channel).Result()
	if err != nil {
		return 0, err
	}
	return n[Channel], nil
}
