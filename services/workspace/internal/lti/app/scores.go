package app

import (
	"context"
	"time"

	"github.com/liveproctor/workspaces/pkg/fault"
	ltidomain "github.com/liveproctor/workspaces/services/workspace/internal/lti/domain"
)

// Scores to a platform's gradebook (AGS 2.0), in one place: a score for a
// launch is kept (ScoreStore.Add) and answered at once, pending; the
// delivery loop sends it to the launch's line item, in the order the
// scores came, one at a time per user and line item (a queue), retrying
// while the platform is throttling or down, and records what became of it.

// ScoreStatus is where a score stands.
type ScoreStatus string

// A score is pending until it is delivered or given up on.
const (
	ScorePending   ScoreStatus = "pending"
	ScoreDelivered ScoreStatus = "delivered"
	ScoreFailed    ScoreStatus = "failed"
)

// ScoreRecord is a score as kept: what the vendor gave, for whom and
// where it goes, and what became of it.
type ScoreRecord struct {
	ID          string
	WorkspaceID string
	LaunchID    string
	// Queue is the queue the score waits in: one per user and line item
	// (scoreQueue), in which scores are delivered one at a time, in order.
	Queue string
	// What the launch said of where the score goes.
	RegistrationID string
	UserID         string // the launch's sub
	ContextID      string
	ResourceLinkID string
	ResourceID     string // the launch's exam configuration: a line item made for the resource link carries it
	LineItem       string // the launch's line item; empty: one is found or made for the resource link
	LineItems      string
	Scopes         []string
	Score          ltidomain.Score
	Status         ScoreStatus
	// Reason says why a score failed, in the platform's words when it gave
	// some (clipped).
	Reason   string
	Attempts int
	// Timestamp is the score's AGS timestamp, stamped at its first attempt
	// and kept for its retries; zero until then.
	Timestamp time.Time
	CreatedAt time.Time
	UpdatedAt time.Time
}

// ScoreProgress is what an attempt leaves a score with.
type ScoreProgress struct {
	Status    ScoreStatus
	Reason    string
	Attempts  int
	Timestamp time.Time
	At        time.Time
}

// ScoreQueue is a queue of one user's scores on one line item, as a
// delivery loop claimed it: the score first in line (Head, empty when the
// queue is empty), the last timestamp sent, the line item found for a
// resource link, and the lease.
type ScoreQueue struct {
	ID            string
	Head          string
	LastTimestamp time.Time
	LineItem      string
	Lease         Lease
}

// Lease is a delivery loop's hold of a queue: until Until no other claim
// takes it, and only a write naming Token settles it.
type Lease struct {
	Owner string
	Token string
	Until time.Time
}

// ScoreSettlement is what an attempt on a queue's head leaves the queue
// with.
type ScoreSettlement struct {
	// Done takes the head out of the queue (delivered or failed); else it
	// is tried again at RetryAt.
	Done    bool
	RetryAt time.Time
	// LastTimestamp is the head's timestamp, once stamped (zero: none).
	LastTimestamp time.Time
	// LineItem is the line item found or made for the queue's resource
	// link (empty: none, or the scores name theirs).
	LineItem string
}

// ScoreStore keeps scores and their queues, shared by every replica
// (MongoDB: lti_scores, lti_score_queues), surviving restarts. Every write
// to a claimed queue is conditional on its lease's token: one that finds
// the lease lost changes nothing.
type ScoreStore interface {
	// Add keeps a new score, pending, at the end of its queue;
	// ErrScoreBacklog when the queue holds ScoreBacklogMax scores already.
	Add(ctx context.Context, r ScoreRecord) error
	// Get returns workspace workspaceID's score id; ok is false when there
	// is none (unknown, past the retention, another workspace's).
	Get(ctx context.Context, workspaceID, id string) (r ScoreRecord, ok bool, err error)
	// Claim leases the queue due longest (work waiting, no lease or
	// backoff holding it) to owner until until; false when none is due.
	Claim(ctx context.Context, owner string, now, until time.Time) (ScoreQueue, bool, error)
	// Score reads a score by id, for the delivery loop; ok is false when
	// there is none.
	Score(ctx context.Context, id string) (r ScoreRecord, ok bool, err error)
	// Progress records an attempt's outcome on a pending score; a score
	// already delivered or failed is left as it is.
	Progress(ctx context.Context, id string, p ScoreProgress) error
	// Settle stores s on q and ends its lease at now; false when the lease
	// was lost.
	Settle(ctx context.Context, q ScoreQueue, s ScoreSettlement, now time.Time) (bool, error)
}

// ScoreBacklogMax bounds the scores waiting in one queue (one user, one
// line item): a vendor's back end that sends faster than the platform
// takes them is told so, not queued without end.
const ScoreBacklogMax = 50

// ErrScoreBacklog refuses a score while ScoreBacklogMax of the same user's
// scores on the same line item wait for the platform.
var ErrScoreBacklog = &fault.Error{
	Kind:       fault.Throttled,
	Message:    "too many of this user's scores on this line item wait for the platform: send again once some are delivered",
	RetryAfter: 30 * time.Second,
}

// The AGS 2.0 scopes (§3.1) a score's calls ask tokens for.
const (
	ScopeScore    = "https://purl.imsglobal.org/spec/lti-ags/scope/score"
	ScopeLineItem = "https://purl.imsglobal.org/spec/lti-ags/scope/lineitem"
)

// LineItem is a gradebook column the tool makes for a resource link.
type LineItem struct {
	Label          string
	ScoreMaximum   float64
	ResourceLinkID string
	ResourceID     string // the exam configuration; empty: none
}

// Gradebook is a platform's Assignment and Grade Services
// (adapters/platformags). Its errors are faults but for ErrTokenRefused: a
// 429 or 5xx, or a platform that could not be reached, Unavailable with
// the platform's Retry-After (retried); anything else BadGateway, in the
// platform's words (given up on).
type Gradebook interface {
	// PostScore sends a score (ltidomain.Score.Payload) to a line item's
	// scores URL (ltidomain.ScoresURL).
	PostScore(ctx context.Context, scoresURL, accessToken string, payload map[string]any) error
	// FindLineItem returns the URL of the first line item at lineItemsURL
	// of the resource link (and resource id, when not empty); ok is false
	// when there is none.
	FindLineItem(ctx context.Context, lineItemsURL, accessToken, resourceLinkID, resourceID string) (url string, ok bool, err error)
	// CreateLineItem makes item at lineItemsURL and returns its URL.
	CreateLineItem(ctx context.Context, lineItemsURL, accessToken string, item LineItem) (string, error)
}

// LineItemClaims records the line item found or made for a resource link,
// shared by every replica (MongoDB: lti_line_items), so that scores of
// several users arriving at once make one: the first to claim the
// resource link finds or makes it while the others wait.
type LineItemClaims interface {
	// Claim returns the line item recorded under key, or else the right
	// to find or make it until until (a token, to record it with); both
	// empty when another holds that right.
	Claim(ctx context.Context, key, owner string, now, until time.Time) (lineItem, token string, err error)
	// Record keeps lineItem under key, if token's claim still holds.
	Record(ctx context.Context, key, token, lineItem string) error
	// Release gives token's claim up, if it still holds, so that the next
	// score to need the line item claims it at once.
	Release(ctx context.Context, key, token string) error
}
