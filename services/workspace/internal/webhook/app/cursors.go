package app

import (
	"context"
	"time"
)

// CursorKind says what a cursor delivers.
type CursorKind string

const (
	// LiveCursor is an endpoint's feed, one per endpoint: every event its
	// filter admits, after After, in id order.
	LiveCursor CursorKind = "live"
	// ReplayCursor is a recovery: the events the filter admits in
	// (After, Until], in id order, beside the live feed.
	ReplayCursor CursorKind = "replay"
	// ResendCursor delivers the one event Until again, whatever the
	// filter says (its owner asked for it by id).
	ResendCursor CursorKind = "resend"
	// TestCursor delivers Test, a synthetic message.
	TestCursor CursorKind = "test"
)

// Cursor is where one delivery stands, as a dispatcher claimed it.
type Cursor struct {
	ID          string
	Kind        CursorKind
	WorkspaceID string
	EndpointID  string
	// After is the last event id settled (delivered, or given up on): the
	// feed goes on after it.
	After string
	// Until bounds a replay; a resend's one event.
	Until string
	// Head is the message being retried; nil when none is.
	Head *Head
	// FailingSince is when the endpoint's first failure since its last
	// success was (live cursors only); zero when it is not failing.
	FailingSince time.Time
	// Test is a test cursor's message.
	Test *TestMessage
	// CreatedAt is when the cursor was made.
	CreatedAt time.Time
	// WokenFor is the latest time a wake asked a live cursor to look (when
	// the events last published settle); zero when none did.
	WokenFor time.Time
	Lease    Lease
}

// Head is a message that failed and awaits its next attempt.
type Head struct {
	// MsgID is the event id (a test message's id for a test cursor).
	MsgID string
	// Attempts is how many attempts were made.
	Attempts int
}

// TestMessage is a synthetic webhook.test message.
type TestMessage struct {
	MsgID string
	Body  []byte
}

// Lease is a dispatcher's hold of a cursor: until Until, no other claim
// takes it, and only a write naming Token settles it.
type Lease struct {
	Owner string
	Token string
	Until time.Time
}

// Settlement is what an attempt (or a look at an empty feed) leaves a
// cursor with.
type Settlement struct {
	After string
	// Head is the message to retry; nil: none.
	Head *Head
	// FailingSince: zero when the endpoint is not failing.
	FailingSince time.Time
	// NextAttemptAt is when the cursor is due again.
	NextAttemptAt time.Time
	// Idle marks a re-check of an empty (or disabled) feed: when a wake
	// came during the lease (WokenFor moved), the time it asked for is
	// kept instead of NextAttemptAt.
	Idle bool
}

// Cursors is the delivery state as the dispatcher needs it (MongoDB in
// production: webhook_cursors, webhook_attempts). Every write to a claimed
// cursor is conditional on its lease's token: one that finds the lease
// lost (it expired and another dispatcher claimed the cursor, or the
// endpoint was forgotten) changes nothing.
type Cursors interface {
	// Claim leases the cursor due longest (its next attempt at or before
	// now, no lease held) to owner until until; false when none is due.
	Claim(ctx context.Context, owner string, now, until time.Time) (Cursor, bool, error)
	// Settle stores s and ends the lease at now; false when the lease was
	// lost.
	Settle(ctx context.Context, c Cursor, s Settlement, now time.Time) (bool, error)
	// Drop removes a cursor that is done (or whose endpoint is gone).
	Drop(ctx context.Context, c Cursor) error
	// Record stores an attempt made for c.
	Record(ctx context.Context, c Cursor, a Attempt) error
}
