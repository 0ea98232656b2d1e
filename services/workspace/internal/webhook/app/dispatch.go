package app

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"net"
	"time"

	"github.com/liveproctor/workspaces/pkg/claimloop"
	"github.com/liveproctor/workspaces/pkg/outbound"
	"github.com/liveproctor/workspaces/pkg/webhook"
	"github.com/liveproctor/workspaces/services/workspace/internal/domain"
)

// DispatcherSettings tune a Dispatcher; zero fields take the defaults.
type DispatcherSettings struct {
	// Workers bounds the attempts this replica makes at once
	// (WEBHOOK_WORKERS, 8). An attempt mostly waits on its receiver, up
	// to webhook.Timeout; several let a few slow receivers not hold back
	// the others, and the bound keeps what a replica holds (leases,
	// connections) small.
	Workers int
	// Lease is how long a claim holds a cursor (30 s): longer than an
	// attempt may take (webhook.Timeout) with the store's writes around
	// it, and than the settle window, so that a wake during it is kept.
	Lease time.Duration
	// IdleRecheck is how long a live cursor with nothing to deliver waits
	// before it looks again, unless a publish wakes it sooner
	// (WEBHOOK_IDLE_RECHECK, 1 min): the bound on a lost wake.
	IdleRecheck time.Duration
	// Poll is how often Run looks for due cursors while it finds none
	// (1 s).
	Poll time.Duration
	// StopGrace is how long attempts in flight may go on once Run's
	// context ends; zero abandons them at once. An abandoned attempt is
	// not recorded and its cursor not settled: its lease expires, and a
	// dispatcher makes the attempt again, with the same webhook-id.
	StopGrace time.Duration
	// DisableAfter: an endpoint whose attempts have all failed for this
	// long is disabled (5 days).
	DisableAfter time.Duration
	// Retry says when a failed message's next attempt is due, if any: a
	// webhook.Schedule's NextAttempt (its step, or a longer Retry-After);
	// webhook.DefaultSchedule's when nil.
	Retry func(o webhook.Outcome, attempt int, random func() float64) (time.Duration, bool)
	// Now and Random are the clock and the jitter's source (time.Now and
	// math/rand/v2's Float64), for tests.
	Now    func() time.Time
	Random func() float64
	Logger *slog.Logger
}

func (s DispatcherSettings) withDefaults() DispatcherSettings {
	if s.Workers <= 0 {
		s.Workers = 8
	}
	if s.Lease <= 0 {
		s.Lease = 30 * time.Second
	}
	if s.IdleRecheck <= 0 {
		s.IdleRecheck = time.Minute
	}
	if s.Poll <= 0 {
		s.Poll = time.Second
	}
	if s.DisableAfter <= 0 {
		s.DisableAfter = 5 * 24 * time.Hour
	}
	if s.Retry == nil {
		s.Retry = webhook.DefaultSchedule.NextAttempt
	}
	if s.Now == nil {
		s.Now = time.Now
	}
	if s.Random == nil {
		s.Random = rand.Float64
	}
	if s.Logger == nil {
		s.Logger = slog.Default()
	}
	return s
}

// startGrace is how long a new live cursor whose endpoint is not found is
// kept: the cursor is made before its endpoint is stored, and the request
// storing it may still be under way.
const startGrace = time.Minute

// Dispatcher delivers the audit trail to webhook endpoints. Each replica
// runs one; they share the work through the cursors' leases.
//
// An endpoint's live cursor has one message in flight at a time, so its
// events arrive in the order they were recorded; a message that fails is
// retried before the next is sent. A recovery, a resend or a test message
// has a cursor of its own, delivered beside the live one. A cursor moves
// only once its attempt is recorded: a replica that dies mid-attempt
// leaves the lease to expire, and another sends the message again with
// the same webhook-id. Delivery is at least once, and exactly once in a
// normal run.
type Dispatcher struct {
	cursors   Cursors
	endpoints EndpointSource
	events    EventSource
	encode    Encoder
	sender    *webhook.Sender
	replica   string
	s         DispatcherSettings
}

// NewDispatcher returns a dispatcher over the delivery state, sending
// through sender (whose client applies the outbound rule); replica names
// this process in the leases it takes.
func NewDispatcher(cursors Cursors, endpoints EndpointSource, events EventSource, encode Encoder, sender *webhook.Sender,
	replica string, s DispatcherSettings) *Dispatcher {
	return &Dispatcher{cursors: cursors, endpoints: endpoints, events: events, encode: encode, sender: sender,
		replica: replica, s: s.withDefaults()}
}

// Run claims due cursors and delivers them, at most Workers at once, until
// ctx ends: it claims again at once while cursors are due, and looks every
// Poll when none is. Then the attempts in flight get StopGrace to finish.
func (d *Dispatcher) Run(ctx context.Context) {
	claimloop.Run(ctx, d.s.Workers, d.s.Poll, d.claim, d.deliver, claimloop.StopGrace(d.s.StopGrace))
}

// claim claims a due cursor; false when none is, or when the store failed.
func (d *Dispatcher) claim(ctx context.Context) (Cursor, bool) {
	now := d.s.Now()
	c, ok, err := d.cursors.Claim(ctx, d.replica, now, now.Add(d.s.Lease))
	if err != nil && ctx.Err() == nil {
		d.s.Logger.Warn("webhook cursors could not be claimed; the dispatcher tries again", "error", err.Error(), "retry_in", d.s.Poll)
	}
	return c, ok && err == nil
}

// deliver makes c's next attempt within its lease: past it, another
// dispatcher may hold the cursor.
func (d *Dispatcher) deliver(work context.Context, c Cursor) {
	ctx, cancel := context.WithDeadline(work, c.Lease.Until)
	defer cancel()
	if err := d.step(ctx, c); err != nil {
		level := slog.LevelWarn
		if work.Err() != nil {
			level = slog.LevelInfo // stopped: abandoned, as a replica that dies abandons it
		}
		d.s.Logger.Log(context.Background(), level, "a webhook delivery did not finish; its cursor is due again when its lease ends",
			"cursor", c.ID, "workspace", c.WorkspaceID, "endpoint", c.EndpointID, "error", err.Error())
	}
}

// step is one look at c: the endpoint as it is now, then the message due,
// its attempt and what the outcome asks for.
func (d *Dispatcher) step(ctx context.Context, c Cursor) error {
	t, err := d.endpoints.Target(ctx, c.WorkspaceID, c.EndpointID)
	switch {
	case errors.Is(err, ErrEndpointGone) && c.Kind == LiveCursor && d.s.Now().Sub(c.CreatedAt) < startGrace:
		return d.idle(ctx, c, c.After)
	case errors.Is(err, ErrEndpointGone):
		return d.cursors.Drop(ctx, c)
	case err != nil:
		return fmt.Errorf("read the endpoint: %w", err)
	case !t.Enabled:
		return d.idle(ctx, c, c.After)
	}
	m, found, err := d.message(ctx, c, t)
	if err != nil {
		return err
	}
	if !found {
		return d.idle(ctx, c, max(c.After, t.From))
	}
	return d.attempt(ctx, c, t, m)
}

// message is what an attempt sends.
type message struct {
	// id is the webhook-id: the event's id, or the test message's.
	id   string
	body []byte
	// event: it is an event of the audit trail, which delivery may give
	// up on (a test message is not).
	event bool
	// attempt counts this attempt, from 1.
	attempt int
}

// message returns the message c has to deliver to t; false when it has
// none now.
func (d *Dispatcher) message(ctx context.Context, c Cursor, t Target) (message, bool, error) {
	if c.Kind == TestCursor {
		return message{id: c.Test.MsgID, body: c.Test.Body, attempt: nextAttempt(c, c.Test.MsgID)}, true, nil
	}
	e, found, err := d.nextEvent(ctx, c, t)
	if err != nil || !found {
		return message{}, false, err
	}
	body, err := d.encode(e)
	if err != nil {
		return message{}, false, fmt.Errorf("encode event %s: %w", e.ID, err)
	}
	return message{id: e.ID, body: body, event: true, attempt: nextAttempt(c, e.ID)}, true, nil
}

// nextEvent returns the event c has to deliver to t: the one it is
// retrying, else the next its filter admits (a resend's one event,
// whatever the filter).
func (d *Dispatcher) nextEvent(ctx context.Context, c Cursor, t Target) (domain.Event, bool, error) {
	if c.Kind == ResendCursor {
		return d.event(ctx, c, c.Until)
	}
	after := c.After
	if c.Kind == LiveCursor {
		after = max(after, t.From) // a re-enabled endpoint starts anew
	}
	if c.Head != nil && c.Head.MsgID > after {
		e, found, err := d.event(ctx, c, c.Head.MsgID)
		if err != nil || found {
			return e, found, err
		}
		after = c.Head.MsgID // gone past the retention: the feed goes on after it
	}
	types := make([]domain.EventType, len(t.EventTypes))
	for i, name := range t.EventTypes {
		types[i] = domain.EventType(name)
	}
	events, err := d.events.Next(ctx, c.WorkspaceID, after, types, 1)
	switch {
	case err != nil:
		return domain.Event{}, false, fmt.Errorf("read the next event: %w", err)
	case len(events) == 0, c.Kind == ReplayCursor && events[0].ID > c.Until:
		return domain.Event{}, false, nil
	}
	return events[0], true, nil
}

// event reads one event; false when the workspace no longer has it.
func (d *Dispatcher) event(ctx context.Context, c Cursor, id string) (domain.Event, bool, error) {
	e, err := d.events.Event(ctx, c.WorkspaceID, id)
	if errors.Is(err, domain.ErrNotFound) {
		return domain.Event{}, false, nil
	}
	if err != nil {
		return domain.Event{}, false, fmt.Errorf("read event %s: %w", id, err)
	}
	return e, true, nil
}

// nextAttempt counts the attempt at msgID c is about to make.
func nextAttempt(c Cursor, msgID string) int {
	if c.Head != nil && c.Head.MsgID == msgID {
		return c.Head.Attempts + 1
	}
	return 1
}

// attempt sends m to t, records the attempt, and settles c as its outcome
// asks.
func (d *Dispatcher) attempt(ctx context.Context, c Cursor, t Target, m message) error {
	if len(t.Secrets) == 0 {
		return errors.New("the endpoint has no secret: nothing is sent unsigned")
	}
	secrets := make([]webhook.Secret, len(t.Secrets))
	for i, text := range t.Secrets {
		var err error
		if secrets[i], err = webhook.ParseSecret(text); err != nil {
			return fmt.Errorf("the endpoint's secret: %w", err)
		}
	}
	start := d.s.Now()
	out := d.sender.Send(ctx, t.URL, m.id, m.body, secrets...)
	if ctx.Err() != nil {
		return fmt.Errorf("attempt abandoned: %w", ctx.Err())
	}
	a := Attempt{EventID: m.id, AttemptedAt: start, Status: out.Status, DurationMs: out.Duration.Milliseconds(), Response: out.Response}
	if out.Err != nil {
		a.Error = failure(out.Err)
	}
	if err := d.cursors.Record(ctx, c, a); err != nil {
		return fmt.Errorf("record the attempt: %w", err)
	}
	return d.settleOutcome(ctx, c, m, out)
}

// failure says why an attempt got no answer, for the endpoint's owner:
// never in the words of a connection's error, which name the address the
// host resolved to inside the service's network.
func failure(err error) string {
	var dnsErr *net.DNSError
	var certErr *tls.CertificateVerificationError
	switch {
	case errors.Is(err, webhook.ErrTimeout):
		return "no answer within the timeout"
	case errors.As(err, &dnsErr):
		return "the host's name could not be resolved"
	case errors.As(err, &certErr):
		return "the host's TLS certificate was refused"
	case errors.Is(err, outbound.ErrNotHTTPS), errors.Is(err, outbound.ErrNotPublic), errors.Is(err, outbound.ErrMalformed),
		errors.Is(err, outbound.ErrURLTooLong):
		return "the URL is refused: it " + err.Error()
	default: // a private address refused at dial (outbound.ErrAddressNotPublic) among them
		return "the host could not be reached"
	}
}

// settleOutcome settles c as the outcome of m's attempt asks: move on
// after a success; disable the endpoint on 410 or after failing for
// DisableAfter; retry a failure on the schedule, or give up on it after
// the last attempt and move on.
func (d *Dispatcher) settleOutcome(ctx context.Context, c Cursor, m message, out webhook.Outcome) error {
	switch out.Verdict {
	case webhook.Delivered:
		return d.advance(ctx, c, m.id, time.Time{})
	case webhook.Gone:
		return d.disable(ctx, c, "the endpoint answered 410 Gone")
	}
	now := d.s.Now()
	failingSince := c.FailingSince
	if c.Kind == LiveCursor && failingSince.IsZero() {
		failingSince = now
	}
	if c.Kind == LiveCursor && now.Sub(failingSince) >= d.s.DisableAfter {
		return d.disable(ctx, c, "every attempt has failed since "+failingSince.UTC().Format(time.RFC3339))
	}
	wait, again := d.s.Retry(out, m.attempt, d.s.Random)
	if again {
		return d.settle(ctx, c, Settlement{After: c.After, Head: &Head{MsgID: m.id, Attempts: m.attempt},
			FailingSince: failingSince, NextAttemptAt: now.Add(wait)})
	}
	if m.event {
		if err := d.endpoints.AttemptsExhausted(ctx, c.WorkspaceID, c.EndpointID, m.id); err != nil {
			return fmt.Errorf("record the attempts' exhaustion: %w", err)
		}
	}
	return d.advance(ctx, c, m.id, failingSince)
}

// advance moves c past msgID, settled: a feed goes on at once (more may
// be due); a cursor for one message, or a replay at its end, is done.
func (d *Dispatcher) advance(ctx context.Context, c Cursor, msgID string, failingSince time.Time) error {
	if c.Kind == ResendCursor || c.Kind == TestCursor || c.Kind == ReplayCursor && msgID >= c.Until {
		return d.cursors.Drop(ctx, c)
	}
	return d.settle(ctx, c, Settlement{After: msgID, FailingSince: failingSince, NextAttemptAt: d.s.Now()})
}

// disable turns the endpoint off with the reason, and leaves c idle.
func (d *Dispatcher) disable(ctx context.Context, c Cursor, reason string) error {
	if err := d.endpoints.Disable(ctx, c.WorkspaceID, c.EndpointID, reason); err != nil {
		return fmt.Errorf("disable the endpoint: %w", err)
	}
	return d.idle(ctx, c, c.After)
}

// idle leaves a live cursor with nothing to send (its feed is empty, or
// its endpoint off) to look again after IdleRecheck, or when a publish
// wakes it, or when the events it was last woken for settle if that is
// still to come (they were published after those it saw); it holds no
// retry and no failure then. Any other cursor is done.
func (d *Dispatcher) idle(ctx context.Context, c Cursor, after string) error {
	if c.Kind != LiveCursor {
		return d.cursors.Drop(ctx, c)
	}
	now := d.s.Now()
	next := now.Add(d.s.IdleRecheck)
	if c.WokenFor.After(now) && c.WokenFor.Before(next) {
		next = c.WokenFor
	}
	return d.settle(ctx, c, Settlement{After: after, NextAttemptAt: next, Idle: true})
}

// settle stores s; a lease lost meanwhile (it expired and another
// dispatcher holds the cursor, or the endpoint was deleted) leaves it to
// that holder.
func (d *Dispatcher) settle(ctx context.Context, c Cursor, s Settlement) error {
	settled, err := d.cursors.Settle(ctx, c, s, d.s.Now())
	if err != nil {
		return fmt.Errorf("settle the cursor: %w", err)
	}
	if !settled {
		d.s.Logger.Info("a webhook cursor's lease ended before its settle; its next holder goes on",
			"cursor", c.ID, "workspace", c.WorkspaceID, "endpoint", c.EndpointID)
	}
	return nil
}
