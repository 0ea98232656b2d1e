package app

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"time"

	"github.com/liveproctor/workspaces/pkg/claimloop"
	"github.com/liveproctor/workspaces/pkg/clip"
	"github.com/liveproctor/workspaces/pkg/fault"
	"github.com/liveproctor/workspaces/pkg/webhook"
	"github.com/liveproctor/workspaces/services/workspace/internal/domain"
	ltidomain "github.com/liveproctor/workspaces/services/workspace/internal/lti/domain"
)

// ScoreDeliverySettings tune a ScoreDelivery; zero fields take the
// defaults.
type ScoreDeliverySettings struct {
	// Workers bounds the queues this replica delivers at once
	// (LTI_SCORE_WORKERS, 4).
	Workers int
	// Lease is how long a claim holds a queue (LTI_SCORE_LEASE, 1 min):
	// longer than an attempt may take (a token, the line item and the
	// score, each within the outbound client's timeout: up to 40 s) with
	// the store's writes around it.
	Lease time.Duration
	// Poll is how often Run looks for due queues while it finds none
	// (LTI_SCORE_POLL, 1 s).
	Poll time.Duration
	// Window is how long a score may wait for its delivery
	// (LTI_SCORE_GIVE_UP_AFTER, 7 days): one older fails at its next
	// turn, so that a platform down for days does not hold a queue's
	// later scores for weeks, and every score is settled within the
	// store's retention (LTI_SCORE_RETENTION, held longer by more than a
	// turn's longest wait).
	Window time.Duration
	// Retry is the wait after a failed attempt, or false when it was the
	// last: webhook.DefaultSchedule's Backoff (8 attempts over about a
	// day) when nil. A platform's Retry-After that is longer wins.
	Retry func(attempt int, random func() float64) (time.Duration, bool)
	// Now and Random are the clock and the jitter's source, for tests.
	Now    func() time.Time
	Random func() float64
	Logger *slog.Logger
}

func (s ScoreDeliverySettings) withDefaults() ScoreDeliverySettings {
	if s.Workers <= 0 {
		s.Workers = 4
	}
	if s.Lease <= 0 {
		s.Lease = time.Minute
	}
	if s.Poll <= 0 {
		s.Poll = time.Second
	}
	if s.Window <= 0 {
		s.Window = 7 * 24 * time.Hour
	}
	if s.Retry == nil {
		s.Retry = webhook.DefaultSchedule.Backoff
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

// lineItemWait is how long a score waits while another replica finds or
// makes its resource link's line item: not an attempt of its own.
const lineItemWait = 2 * time.Second

// ScoreDelivery sends the kept scores to the platforms' line items. Each
// replica runs one; they share the work through the queues' leases.
//
// A queue (one user, one line item) has one score in flight at a time, the
// first in line, so a user's scores arrive in the order they came, each
// stamped later than the last (ltidomain.NextScoreTimestamp). A score's
// stamp is stored before its first attempt and kept for its retries, and
// the queue moves only once the outcome is recorded: a replica that dies
// mid-attempt leaves the lease to expire, and another sends the same score
// with the same stamp, which the platform takes as no change. Delivery is
// at least once, and exactly once in a normal run.
type ScoreDelivery struct {
	ws        Workspaces
	scores    ScoreStore
	lineItems LineItemClaims
	tokens    *PlatformTokens
	gradebook Gradebook
	replica   string
	s         ScoreDeliverySettings
}

// NewScoreDelivery returns the scores' delivery; replica names this
// process in the leases it takes.
func NewScoreDelivery(ws Workspaces, scores ScoreStore, lineItems LineItemClaims, tokens *PlatformTokens, gradebook Gradebook,
	replica string, s ScoreDeliverySettings) *ScoreDelivery {
	notNil(ws, scores, lineItems, tokens, gradebook)
	return &ScoreDelivery{ws: ws, scores: scores, lineItems: lineItems, tokens: tokens, gradebook: gradebook,
		replica: replica, s: s.withDefaults()}
}

// Run claims due queues and delivers their first scores, at most Workers
// at once, until ctx ends: it claims again at once while queues are due,
// and looks every Poll when none is. Attempts in flight when ctx ends are
// abandoned; their leases expire and another turn makes them again.
func (d *ScoreDelivery) Run(ctx context.Context) {
	claimloop.Run(ctx, d.s.Workers, d.s.Poll, d.claim, d.deliver)
}

// claim claims a due queue; false when none is, or when the store failed.
func (d *ScoreDelivery) claim(ctx context.Context) (ScoreQueue, bool) {
	now := d.s.Now()
	q, ok, err := d.scores.Claim(ctx, d.replica, now, now.Add(d.s.Lease))
	if err != nil && ctx.Err() == nil {
		d.s.Logger.Warn("LTI score queues could not be claimed; the delivery tries again", "error", err.Error(), "retry_in", d.s.Poll)
	}
	return q, ok && err == nil
}

// deliver makes q's next attempt within its lease, which began as it was
// claimed: past it, another replica may hold the queue.
func (d *ScoreDelivery) deliver(ctx context.Context, q ScoreQueue) {
	ctx, cancel := context.WithTimeout(ctx, d.s.Lease)
	defer cancel()
	if err := d.step(ctx, q); err != nil {
		d.s.Logger.Warn("an LTI score's delivery did not finish; its queue is due again when its lease ends",
			"queue", q.ID, "score", q.Head, "error", err.Error())
	}
}

// step is one turn of q: its first score, sent or given up on, and the
// queue settled.
func (d *ScoreDelivery) step(ctx context.Context, q ScoreQueue) error {
	if q.Head == "" {
		return d.settle(ctx, q, ScoreSettlement{Done: true})
	}
	r, ok, err := d.scores.Score(ctx, q.Head)
	if err != nil {
		return err
	}
	if !ok || r.Status != ScorePending {
		// Gone past its retention, or settled by a turn whose lease ended
		// before it moved the queue.
		return d.settle(ctx, q, ScoreSettlement{Done: true, LastTimestamp: r.Timestamp})
	}
	now := d.s.Now()
	if now.Sub(r.CreatedAt) > d.s.Window {
		return d.finish(ctx, q, r, ScoreFailed, fmt.Sprintf("not delivered within %s of its making", d.s.Window), "")
	}
	w, err := d.ws.Get(ctx, r.WorkspaceID)
	switch {
	case errors.Is(err, domain.ErrNotFound):
		return d.finish(ctx, q, r, ScoreFailed, "the workspace was deleted", "")
	case err != nil:
		return err
	case w.Deleted():
		return d.finish(ctx, q, r, ScoreFailed, "the workspace was deleted", "")
	}
	reg, ok := w.LTIRegistrations().Get(r.RegistrationID)
	if !ok {
		return d.finish(ctx, q, r, ScoreFailed, "the launch's LTI registration was removed", "")
	}
	if r.Timestamp.IsZero() {
		r.Timestamp = ltidomain.NextScoreTimestamp(q.LastTimestamp, now)
		err := d.scores.Progress(ctx, r.ID, ScoreProgress{Status: ScorePending, Attempts: r.Attempts, Timestamp: r.Timestamp, At: now})
		if err != nil {
			return err
		}
	}
	lineItem, err := d.lineItem(ctx, q, r, reg)
	if err == nil && lineItem == "" {
		// Another replica is finding or making it: not an attempt.
		return d.settle(ctx, q, ScoreSettlement{RetryAt: now.Add(lineItemWait), LastTimestamp: r.Timestamp})
	}
	if err == nil {
		err = d.send(ctx, r, reg, lineItem)
	}
	found := ""
	if r.LineItem == "" {
		found = lineItem
	}
	return d.outcome(ctx, q, r, err, found)
}

// lineItem is where r goes: the launch's line item, or the one found or
// made for its resource link (recorded in the queue, and store-wide under
// the resource link's key); empty while another replica holds the right
// to find or make it.
func (d *ScoreDelivery) lineItem(ctx context.Context, q ScoreQueue, r ScoreRecord, reg ltidomain.Registration) (string, error) {
	switch {
	case r.LineItem != "":
		return r.LineItem, nil
	case q.LineItem != "":
		return q.LineItem, nil
	}
	key := lineItemKey(r.RegistrationID, r.ContextID, r.ResourceLinkID, r.ResourceID)
	now := d.s.Now()
	found, token, err := d.lineItems.Claim(ctx, key, d.replica, now, now.Add(d.s.Lease))
	if err != nil || found != "" || token == "" {
		return found, err
	}
	scopes := []string{ScopeLineItem, ScopeScore}
	var url string
	err = d.withToken(ctx, reg, scopes, func(accessToken string) error {
		// Found first: a replica that made it and died before recording
		// it left it on the platform.
		u, ok, err := d.gradebook.FindLineItem(ctx, r.LineItems, accessToken, r.ResourceLinkID, r.ResourceID)
		if err != nil || ok {
			url = u
			return err
		}
		url, err = d.gradebook.CreateLineItem(ctx, r.LineItems, accessToken, LineItem{
			Label: ltidomain.DeepLinkItemTitle, ScoreMaximum: r.Score.Maximum, ResourceLinkID: r.ResourceLinkID, ResourceID: r.ResourceID,
		})
		return err
	})
	if err != nil {
		// Left to the next turn that needs it, here or on another replica,
		// rather than held until the claim lapses.
		if rerr := d.lineItems.Release(ctx, key, token); rerr != nil {
			d.s.Logger.Warn("an LTI line item's claim could not be given up; it lapses", "error", rerr.Error())
		}
		return "", err
	}
	return url, d.lineItems.Record(ctx, key, token, url)
}

// send posts r to lineItem's scores.
func (d *ScoreDelivery) send(ctx context.Context, r ScoreRecord, reg ltidomain.Registration, lineItem string) error {
	scoresURL, err := ltidomain.ScoresURL(lineItem)
	if err != nil {
		return fault.New(fault.BadGateway, "the platform's line item URL is not an absolute URL: %s", clip.Runes(lineItem, 200))
	}
	payload := r.Score.Payload(r.UserID, r.Timestamp)
	return d.withToken(ctx, reg, d.scoreScopes(r), func(accessToken string) error {
		return d.gradebook.PostScore(ctx, scoresURL, accessToken, payload)
	})
}

// scoreScopes are the scopes a score's token is asked for: those a line
// item's finding asks for where the score may need one, so that one token
// serves the resource link's scores.
func (d *ScoreDelivery) scoreScopes(r ScoreRecord) []string {
	if r.LineItem == "" {
		return []string{ScopeLineItem, ScopeScore}
	}
	return []string{ScopeScore}
}

// withToken calls call with reg's access token for scopes; a token the
// platform refuses (401) is dropped for every replica and call made once
// more with a new one.
func (d *ScoreDelivery) withToken(ctx context.Context, reg ltidomain.Registration, scopes []string, call func(accessToken string) error) error {
	token, err := d.tokens.Token(ctx, reg, scopes)
	if err != nil {
		return err
	}
	err = call(token.AccessToken)
	if !errors.Is(err, ErrTokenRefused) {
		return err
	}
	if err := d.tokens.Invalidate(ctx, reg, scopes, token); err != nil {
		return err
	}
	if token, err = d.tokens.Token(ctx, reg, scopes); err != nil {
		return err
	}
	err = call(token.AccessToken)
	if errors.Is(err, ErrTokenRefused) {
		return fault.New(fault.Unavailable, "the platform refused the tool's new access token")
	}
	return err
}

// outcome records what r's attempt, which ended with err, asks for:
// delivered; retried on the schedule (or the platform's longer
// Retry-After) when the platform was throttling, down or out of reach;
// failed otherwise, or once the schedule is spent.
func (d *ScoreDelivery) outcome(ctx context.Context, q ScoreQueue, r ScoreRecord, err error, found string) error {
	r.Attempts++
	if err == nil {
		return d.finish(ctx, q, r, ScoreDelivered, "", found)
	}
	if ctx.Err() != nil {
		return err // out of lease, or stopping: the next turn tries again
	}
	f, ok := fault.As(err)
	if !ok || f.Kind == fault.Internal {
		return err
	}
	reason := clip.Runes(f.Message, 500)
	if f.Kind != fault.Unavailable {
		return d.finish(ctx, q, r, ScoreFailed, reason, found)
	}
	wait, again := d.s.Retry(r.Attempts, d.s.Random)
	if !again {
		return d.finish(ctx, q, r, ScoreFailed, reason, found)
	}
	now := d.s.Now()
	wait = max(wait, min(f.RetryAfter, webhook.MaxRetryAfter))
	if err := d.scores.Progress(ctx, r.ID, ScoreProgress{
		Status: ScorePending, Reason: reason, Attempts: r.Attempts, Timestamp: r.Timestamp, At: now,
	}); err != nil {
		return err
	}
	return d.settle(ctx, q, ScoreSettlement{RetryAt: now.Add(wait), LastTimestamp: r.Timestamp, LineItem: found})
}

// finish records r delivered or failed, its event in the audit trail, and
// moves its queue on.
func (d *ScoreDelivery) finish(ctx context.Context, q ScoreQueue, r ScoreRecord, status ScoreStatus, reason, found string) error {
	now := d.s.Now()
	if err := d.scores.Progress(ctx, r.ID, ScoreProgress{
		Status: status, Reason: reason, Attempts: r.Attempts, Timestamp: r.Timestamp, At: now,
	}); err != nil {
		return err
	}
	if err := d.record(ctx, r, status, reason, now); err != nil {
		return err
	}
	return d.settle(ctx, q, ScoreSettlement{Done: true, LastTimestamp: r.Timestamp, LineItem: found})
}

// record appends the score's event to its workspace's audit trail, keyed
// by the score and its status, so that a turn made again records it once.
func (d *ScoreDelivery) record(ctx context.Context, r ScoreRecord, status ScoreStatus, reason string, now time.Time) error {
	w, err := d.ws.Get(ctx, r.WorkspaceID)
	if errors.Is(err, domain.ErrNotFound) {
		return nil // no workspace, no audit trail
	}
	if err != nil {
		return err
	}
	t := domain.EventLTIScoreDelivered
	if status == ScoreFailed {
		t = domain.EventLTIScoreFailed
	}
	e := domain.NewEvent(t, w, domain.SystemActor, domain.Target{Type: domain.TargetLTIScore, ID: r.ID}, "", now)
	e.Key = "ltiScore/" + r.ID + "/" + string(status)
	e.Reason = reason
	return d.ws.AppendEvent(ctx, e)
}

func (d *ScoreDelivery) settle(ctx context.Context, q ScoreQueue, s ScoreSettlement) error {
	ok, err := d.scores.Settle(ctx, q, s, d.s.Now())
	if err == nil && !ok {
		d.s.Logger.Info("an LTI score queue's lease ended before its turn was settled; another turn takes it up", "queue", q.ID)
	}
	return err
}
