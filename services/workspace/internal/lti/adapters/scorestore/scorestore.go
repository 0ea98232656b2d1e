// Package scorestore keeps the scores sent to platforms' gradebooks in
// MongoDB:
//
//   - lti_scores: one document per score under its id, with what became of
//     it. A TTL index on createdAt removes it after the retention, which
//     outlasts any score's delivery (the delivery gives up on a score
//     before then);
//   - lti_score_queues: one document per user and line item (the app's
//     queue key), holding the ids of its pending scores in order. A
//     delivery loop claims a due queue with one findAndModify that leases
//     it, and settles it with a write conditional on the lease's token, so
//     that one score per queue is in flight, the first in line. An idle
//     queue is kept for the retention (the last timestamp it sent), then
//     removed by a TTL index on idleSince;
//   - lti_line_items: the line item found or made for a resource link whose
//     launches named none, claimed so that one replica finds or makes it
//     (line_items.go).
//
// Every write is to one document, and every query has an index.
package scorestore

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/liveproctor/workspaces/pkg/breaker"
	"github.com/liveproctor/workspaces/services/workspace/internal/adapters/mongoconn"
	ltiapp "github.com/liveproctor/workspaces/services/workspace/internal/lti/app"
	ltidomain "github.com/liveproctor/workspaces/services/workspace/internal/lti/domain"
)

// Collection names.
const (
	ScoresCollection    = "lti_scores"
	QueuesCollection    = "lti_score_queues"
	LineItemsCollection = "lti_line_items"
)

// indexes are every index the store declares besides each collection's
// _id index, which a score's reads and writes and a queue's go by
// (scorestore_test.go checks every query the store sends against them).
var indexes = []mongoconn.Index{
	// Claim: the queues due (range), the one due longest first (sort),
	// neither leased nor backing off (range). An idle queue is due in the
	// far future and a leased one at its lease's end, so the walk from
	// the start of the index meets few that cannot be claimed.
	{Collection: QueuesCollection, Name: "due", Keys: []string{"dueAt", "heldUntil"}},
	// Retention: idle queues, once their last timestamp is old news.
	{Collection: QueuesCollection, Name: "expiry", Keys: []string{"idleSince"}, Expires: true},
	// Retention: every score, its retention after it was made.
	{Collection: ScoresCollection, Name: "expiry", Keys: []string{"createdAt"}, Expires: true},
	// Retention: a resource link's line item is forgotten after it, and
	// found on the platform again by the next score that needs it.
	{Collection: LineItemsCollection, Name: "expiry", Keys: []string{"createdAt"}, Expires: true},
}

// Store is the scores and their queues on a MongoDB database.
type Store struct {
	scores    *mongo.Collection
	queues    *mongo.Collection
	lineItems *mongo.Collection
	retention time.Duration
	now       func() time.Time
	do        mongoconn.Do
}

var _ ltiapp.ScoreStore = (*Store)(nil)

// Option changes how New builds a Store.
type Option func(*Store)

// WithBreaker sends every operation through b (the workspace store's: the
// same database).
func WithBreaker(b *breaker.Breaker) Option {
	return func(s *Store) { s.do = mongoconn.Through(b) }
}

// WithClock replaces time.Now for the retention's reads, for tests.
func WithClock(now func() time.Time) Option { return func(s *Store) { s.now = now } }

// New returns a store on db keeping scores and idle queues for retention.
// Call Prepare once before use.
func New(db *mongo.Database, retention time.Duration, opts ...Option) *Store {
	s := &Store{
		scores: db.Collection(ScoresCollection), queues: db.Collection(QueuesCollection), lineItems: db.Collection(LineItemsCollection),
		retention: retention, now: time.Now, do: mongoconn.Through(nil),
	}
	for _, o := range opts {
		o(s)
	}
	return s
}

// Prepare creates the indexes that are missing and moves the TTLs to the
// configured retention, at every start.
func (s *Store) Prepare(ctx context.Context) error {
	for _, c := range []*mongo.Collection{s.scores, s.queues, s.lineItems} {
		if err := mongoconn.EnsureIndexes(ctx, s.do, c, indexes, s.retention); err != nil {
			return err
		}
	}
	return nil
}

// scoreDoc is a score as stored.
type scoreDoc struct {
	ID             string     `bson:"_id"`
	WorkspaceID    string     `bson:"workspaceId"`
	LaunchID       string     `bson:"launchId"`
	Queue          string     `bson:"queue"`
	RegistrationID string     `bson:"registrationId"`
	UserID         string     `bson:"userId"`
	ContextID      string     `bson:"contextId,omitempty"`
	ResourceLinkID string     `bson:"resourceLinkId"`
	ResourceID     string     `bson:"resourceId,omitempty"`
	LineItem       string     `bson:"lineItem,omitempty"`
	LineItems      string     `bson:"lineItems,omitempty"`
	Scopes         []string   `bson:"scopes,omitempty"`
	Score          gradeDoc   `bson:"score"`
	Status         string     `bson:"status"`
	Reason         string     `bson:"reason,omitempty"`
	Attempts       int        `bson:"attempts"`
	Timestamp      *time.Time `bson:"timestamp,omitempty"`
	CreatedAt      time.Time  `bson:"createdAt"`
	UpdatedAt      time.Time  `bson:"updatedAt"`
}

type gradeDoc struct {
	Given            float64    `bson:"given"`
	Maximum          float64    `bson:"maximum"`
	ActivityProgress string     `bson:"activityProgress"`
	GradingProgress  string     `bson:"gradingProgress"`
	Comment          string     `bson:"comment,omitempty"`
	SubmittedAt      *time.Time `bson:"submittedAt,omitempty"`
}

// queueDoc is a queue as stored. It is due when dueAt has come (work
// waits: now when a score joins, far off when none waits) and heldUntil
// has passed (no lease, no backoff).
type queueDoc struct {
	ID            string     `bson:"_id"`
	WorkspaceID   string     `bson:"workspaceId"`
	Pending       []string   `bson:"pending"`
	Backlog       int        `bson:"backlog"`
	DueAt         time.Time  `bson:"dueAt"`
	HeldUntil     time.Time  `bson:"heldUntil"`
	LeaseOwner    string     `bson:"leaseOwner,omitempty"`
	LeaseToken    string     `bson:"leaseToken,omitempty"`
	LastTimestamp *time.Time `bson:"lastTimestamp,omitempty"`
	LineItem      string     `bson:"lineItem,omitempty"`
	IdleSince     *time.Time `bson:"idleSince,omitempty"`
}

// idle is the dueAt of a queue no score waits in: a date (a missing field
// would match no range), past any claim's now.
var idle = time.Date(9999, 1, 1, 0, 0, 0, 0, time.UTC)

// neverHeld is the heldUntil of a queue no loop held yet.
var neverHeld = time.Unix(0, 0).UTC()

// Add inserts the score, then puts its id at the end of its queue (made
// when it is the first), due now unless a lease or a backoff holds it. A
// queue full already refuses it, and the score is removed again. A crash
// between the two writes leaves a score no queue names, whose caller had
// no answer: the TTL removes it.
func (s *Store) Add(ctx context.Context, r ltiapp.ScoreRecord) error {
	d := scoreDoc{
		ID: r.ID, WorkspaceID: r.WorkspaceID, LaunchID: r.LaunchID, Queue: r.Queue, RegistrationID: r.RegistrationID,
		UserID: r.UserID, ContextID: r.ContextID, ResourceLinkID: r.ResourceLinkID, ResourceID: r.ResourceID, LineItem: r.LineItem,
		LineItems: r.LineItems, Scopes: r.Scopes,
		Score: gradeDoc{
			Given: r.Score.Given, Maximum: r.Score.Maximum, ActivityProgress: r.Score.ActivityProgress,
			GradingProgress: r.Score.GradingProgress, Comment: r.Score.Comment, SubmittedAt: optionalTime(r.Score.SubmittedAt),
		},
		Status: string(ltiapp.ScorePending), CreatedAt: r.CreatedAt.UTC(), UpdatedAt: r.CreatedAt.UTC(),
	}
	err := s.do(ctx, func(ctx context.Context) error {
		_, err := s.scores.InsertOne(ctx, d)
		return err
	})
	if err != nil {
		return mongoconn.Error("insert an LTI score", err)
	}
	queued, err := s.enqueue(ctx, r)
	if err == nil && !queued {
		err = ltiapp.ErrScoreBacklog
	}
	if err != nil {
		_ = s.do(ctx, func(ctx context.Context) error {
			_, err := s.scores.DeleteOne(ctx, bson.D{{Key: "_id", Value: r.ID}})
			return err
		})
		return err
	}
	return nil
}

// enqueue appends r's id to its queue, when the queue is not full; false
// when it is. An upsert that finds the queue full tries to insert a second
// document with its _id and fails on the duplicate, which is also how two
// first scores of a new queue meet: a second try tells them apart.
func (s *Store) enqueue(ctx context.Context, r ltiapp.ScoreRecord) (bool, error) {
	filter := bson.D{{Key: "_id", Value: r.Queue}, {Key: "backlog", Value: bson.D{{Key: "$lt", Value: ltiapp.ScoreBacklogMax}}}}
	update := bson.D{
		{Key: "$push", Value: bson.D{{Key: "pending", Value: r.ID}}},
		{Key: "$inc", Value: bson.D{{Key: "backlog", Value: 1}}},
		{Key: "$min", Value: bson.D{{Key: "dueAt", Value: r.CreatedAt.UTC()}}},
		{Key: "$unset", Value: bson.D{{Key: "idleSince", Value: ""}}},
		{Key: "$setOnInsert", Value: bson.D{{Key: "workspaceId", Value: r.WorkspaceID}, {Key: "heldUntil", Value: neverHeld}}},
	}
	for range 2 {
		err := s.do(ctx, func(ctx context.Context) error {
			_, err := s.queues.UpdateOne(ctx, filter, update, options.UpdateOne().SetUpsert(true))
			return err
		})
		if err == nil {
			return true, nil
		}
		if !mongo.IsDuplicateKeyError(err) {
			return false, mongoconn.Error("queue an LTI score", err)
		}
	}
	return false, nil
}

// Get reads a score by id, of the workspace and within the retention.
func (s *Store) Get(ctx context.Context, workspaceID, id string) (ltiapp.ScoreRecord, bool, error) {
	return s.find(ctx, bson.D{
		{Key: "_id", Value: id},
		{Key: "workspaceId", Value: workspaceID},
		{Key: "createdAt", Value: bson.D{{Key: "$gt", Value: s.now().Add(-s.retention)}}},
	})
}

// Score reads a score by id.
func (s *Store) Score(ctx context.Context, id string) (ltiapp.ScoreRecord, bool, error) {
	return s.find(ctx, bson.D{{Key: "_id", Value: id}})
}

func (s *Store) find(ctx context.Context, filter bson.D) (ltiapp.ScoreRecord, bool, error) {
	var d scoreDoc
	err := s.do(ctx, func(ctx context.Context) error {
		return s.scores.FindOne(ctx, filter).Decode(&d)
	})
	if errors.Is(err, mongo.ErrNoDocuments) {
		return ltiapp.ScoreRecord{}, false, nil
	}
	if err != nil {
		return ltiapp.ScoreRecord{}, false, mongoconn.Error("find an LTI score", err)
	}
	return d.record(), true, nil
}

// Progress records an attempt on a pending score, with one write
// conditional on its being pending.
func (s *Store) Progress(ctx context.Context, id string, p ltiapp.ScoreProgress) error {
	set := bson.D{
		{Key: "status", Value: string(p.Status)},
		{Key: "attempts", Value: p.Attempts},
		{Key: "updatedAt", Value: p.At.UTC()},
	}
	if p.Reason != "" {
		set = append(set, bson.E{Key: "reason", Value: p.Reason})
	}
	if !p.Timestamp.IsZero() {
		set = append(set, bson.E{Key: "timestamp", Value: p.Timestamp.UTC()})
	}
	err := s.do(ctx, func(ctx context.Context) error {
		_, err := s.scores.UpdateOne(ctx,
			bson.D{{Key: "_id", Value: id}, {Key: "status", Value: string(ltiapp.ScorePending)}},
			bson.D{{Key: "$set", Value: set}})
		return err
	})
	if err != nil {
		return mongoconn.Error("record an LTI score's attempt", err)
	}
	return nil
}

// Claim leases the queue due longest to owner until until: one
// findAndModify, atomic on MongoDB, so of loops racing for a queue one
// gets it.
func (s *Store) Claim(ctx context.Context, owner string, now, until time.Time) (ltiapp.ScoreQueue, bool, error) {
	token := make([]byte, 16)
	_, _ = rand.Read(token) // crypto/rand.Read never fails
	var d queueDoc
	err := s.do(ctx, func(ctx context.Context) error {
		return s.queues.FindOneAndUpdate(ctx,
			bson.D{
				{Key: "dueAt", Value: bson.D{{Key: "$lte", Value: now.UTC()}}},
				{Key: "heldUntil", Value: bson.D{{Key: "$lte", Value: now.UTC()}}},
			},
			bson.D{{Key: "$set", Value: bson.D{
				{Key: "leaseOwner", Value: owner},
				{Key: "leaseToken", Value: hex.EncodeToString(token)},
				{Key: "heldUntil", Value: until.UTC()},
				{Key: "dueAt", Value: until.UTC()},
			}}},
			options.FindOneAndUpdate().SetSort(bson.D{{Key: "dueAt", Value: 1}}).SetReturnDocument(options.After),
		).Decode(&d)
	})
	if errors.Is(err, mongo.ErrNoDocuments) {
		return ltiapp.ScoreQueue{}, false, nil
	}
	if err != nil {
		return ltiapp.ScoreQueue{}, false, mongoconn.Error("claim an LTI score queue", err)
	}
	q := ltiapp.ScoreQueue{
		ID: d.ID, LineItem: d.LineItem,
		Lease: ltiapp.Lease{Owner: d.LeaseOwner, Token: d.LeaseToken, Until: d.HeldUntil},
	}
	if len(d.Pending) > 0 {
		q.Head = d.Pending[0]
	}
	if d.LastTimestamp != nil {
		q.LastTimestamp = d.LastTimestamp.UTC()
	}
	return q, true, nil
}

// Settle stores what q's attempt left, with one write conditional on the
// lease's token: the head taken out (due again now, for the next) or
// held back until its retry. A queue left empty then goes idle with a
// second write conditional on its being empty still, so that a score
// joining meanwhile keeps it due.
func (s *Store) Settle(ctx context.Context, q ltiapp.ScoreQueue, st ltiapp.ScoreSettlement, now time.Time) (bool, error) {
	next := now.UTC()
	if !st.Done && st.RetryAt.After(now) {
		next = st.RetryAt.UTC()
	}
	set := bson.D{{Key: "dueAt", Value: next}, {Key: "heldUntil", Value: next}}
	if st.LineItem != "" {
		set = append(set, bson.E{Key: "lineItem", Value: st.LineItem})
	}
	update := bson.D{{Key: "$set", Value: set}}
	if !st.LastTimestamp.IsZero() {
		update = append(update, bson.E{Key: "$max", Value: bson.D{{Key: "lastTimestamp", Value: st.LastTimestamp.UTC()}}})
	}
	filter := bson.D{{Key: "_id", Value: q.ID}, {Key: "leaseToken", Value: q.Lease.Token}}
	if st.Done && q.Head != "" {
		// Conditional on the head too: a settle sent twice takes one score.
		filter = append(filter, bson.E{Key: "pending.0", Value: q.Head})
		update = append(update,
			bson.E{Key: "$pop", Value: bson.D{{Key: "pending", Value: -1}}},
			bson.E{Key: "$inc", Value: bson.D{{Key: "backlog", Value: -1}}})
	}
	var d queueDoc
	err := s.do(ctx, func(ctx context.Context) error {
		return s.queues.FindOneAndUpdate(ctx, filter, update,
			options.FindOneAndUpdate().SetReturnDocument(options.After)).Decode(&d)
	})
	if errors.Is(err, mongo.ErrNoDocuments) {
		return false, nil
	}
	if err != nil {
		return false, mongoconn.Error("settle an LTI score queue", err)
	}
	if d.Backlog > 0 {
		return true, nil
	}
	err = s.do(ctx, func(ctx context.Context) error {
		_, err := s.queues.UpdateOne(ctx,
			bson.D{{Key: "_id", Value: q.ID}, {Key: "backlog", Value: 0}},
			bson.D{{Key: "$set", Value: bson.D{{Key: "dueAt", Value: idle}, {Key: "idleSince", Value: now.UTC()}}}})
		return err
	})
	if err != nil {
		return false, mongoconn.Error("settle an LTI score queue", err)
	}
	return true, nil
}

func (d scoreDoc) record() ltiapp.ScoreRecord {
	r := ltiapp.ScoreRecord{
		ID: d.ID, WorkspaceID: d.WorkspaceID, LaunchID: d.LaunchID, Queue: d.Queue, RegistrationID: d.RegistrationID,
		UserID: d.UserID, ContextID: d.ContextID, ResourceLinkID: d.ResourceLinkID, ResourceID: d.ResourceID, LineItem: d.LineItem,
		LineItems: d.LineItems, Scopes: d.Scopes,
		Score: ltidomain.Score{
			Given: d.Score.Given, Maximum: d.Score.Maximum, ActivityProgress: d.Score.ActivityProgress,
			GradingProgress: d.Score.GradingProgress, Comment: d.Score.Comment,
		},
		Status: ltiapp.ScoreStatus(d.Status), Reason: d.Reason, Attempts: d.Attempts,
		CreatedAt: d.CreatedAt.UTC(), UpdatedAt: d.UpdatedAt.UTC(),
	}
	if d.Score.SubmittedAt != nil {
		r.Score.SubmittedAt = d.Score.SubmittedAt.UTC()
	}
	if d.Timestamp != nil {
		r.Timestamp = d.Timestamp.UTC()
	}
	return r
}

func optionalTime(t time.Time) *time.Time {
	if t.IsZero() {
		return nil
	}
	u := t.UTC()
	return &u
}
