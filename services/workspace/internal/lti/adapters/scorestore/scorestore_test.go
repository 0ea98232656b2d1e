package scorestore_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"sync"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"

	"github.com/liveproctor/workspaces/services/workspace/internal/adapters/mongoconn/indexcheck"
	"github.com/liveproctor/workspaces/services/workspace/internal/adapters/mongoconn/mongotest"
	"github.com/liveproctor/workspaces/services/workspace/internal/lti/adapters/scorestore"
	ltiapp "github.com/liveproctor/workspaces/services/workspace/internal/lti/app"
	ltidomain "github.com/liveproctor/workspaces/services/workspace/internal/lti/domain"
)

// One FerretDB serves every test of the package, each test in a database
// of its own; every command is checked against the declared indexes.
var (
	commands = indexcheck.NewLog(scorestore.DeclaredIndexes(), "find", "findAndModify", "update", "delete")
	env      = mongotest.New(mongotest.Options{Name: "scorestore", Commands: commands})
)

func TestMain(m *testing.M) {
	os.Exit(env.Run(m))
}

const (
	retention = 30 * 24 * time.Hour
	lease     = 30 * time.Second
)

var t0 = time.Date(2026, 11, 28, 9, 0, 0, 0, time.UTC)

func newStore(t *testing.T) (*scorestore.Store, *mongo.Database) {
	t.Helper()
	db := env.Database(t)
	s := scorestore.New(db, retention, scorestore.WithClock(func() time.Time { return t0.Add(time.Hour) }))
	if err := s.Prepare(context.Background()); err != nil {
		t.Fatal(err)
	}
	return s, db
}

func score(id, queue string, at time.Time) ltiapp.ScoreRecord {
	return ltiapp.ScoreRecord{
		ID: id, WorkspaceID: "springfield", LaunchID: "launch-" + id, Queue: queue, RegistrationID: "reg-1",
		UserID: "user-7", ContextID: "course-9", ResourceLinkID: "link-1", ResourceID: "3f2a6c1e-8d4b-4e2a-9c1f-5b7d2e8a4c6f",
		LineItem:  "https://lms.example.edu/c/9/lineitems/4?type_id=7",
		LineItems: "https://lms.example.edu/c/9/lineitems?type_id=7",
		Scopes:    []string{"https://purl.imsglobal.org/spec/lti-ags/scope/score"},
		Score: ltidomain.Score{
			Given: 7.5, Maximum: 10, ActivityProgress: "Completed", GradingProgress: "FullyGraded",
			Comment: "Well argued.", SubmittedAt: at.Add(-time.Minute),
		},
		Status: ltiapp.ScorePending, CreatedAt: at, UpdatedAt: at,
	}
}

func add(t *testing.T, s *scorestore.Store, rs ...ltiapp.ScoreRecord) {
	t.Helper()
	for _, r := range rs {
		if err := s.Add(context.Background(), r); err != nil {
			t.Fatalf("add %s: %v", r.ID, err)
		}
	}
}

func claim(t *testing.T, s *scorestore.Store, owner string, now time.Time) (ltiapp.ScoreQueue, bool) {
	t.Helper()
	q, ok, err := s.Claim(context.Background(), owner, now, now.Add(lease))
	if err != nil {
		t.Fatalf("claim: %v", err)
	}
	return q, ok
}

func settle(t *testing.T, s *scorestore.Store, q ltiapp.ScoreQueue, st ltiapp.ScoreSettlement, now time.Time) {
	t.Helper()
	if ok, err := s.Settle(context.Background(), q, st, now); err != nil || !ok {
		t.Fatalf("settle %s: %v, %v", q.ID, ok, err)
	}
}

// A score reads back as it was kept, for its own workspace and within the
// retention only; the TTL indexes hold the retention.
func TestAddGet(t *testing.T) {
	s, db := newStore(t)
	ctx := context.Background()
	indexcheck.WantTTL(t, db.Collection(scorestore.ScoresCollection), "expiry", int32(retention/time.Second))
	indexcheck.WantTTL(t, db.Collection(scorestore.QueuesCollection), "expiry", int32(retention/time.Second))
	kept := score("s1", "q1", t0)
	bare := score("s2", "q1", t0)
	bare.ContextID, bare.ResourceID, bare.LineItem, bare.Scopes, bare.Score.Comment, bare.Score.SubmittedAt = "", "", "", nil, "", time.Time{}
	old := score("s3", "q1", t0.Add(-retention))
	add(t, s, kept, bare, old)
	got, ok, err := s.Get(ctx, "springfield", "s1")
	if err != nil || !ok || fmt.Sprint(got) != fmt.Sprint(kept) {
		t.Fatalf("got %+v, %v, %v\nwant %+v", got, ok, err, kept)
	}
	got, ok, err = s.Get(ctx, "springfield", "s2")
	if err != nil || !ok || fmt.Sprint(got) != fmt.Sprint(bare) {
		t.Fatalf("got %+v, %v, %v\nwant %+v", got, ok, err, bare)
	}
	for _, c := range []struct{ ws, id string }{{"shelbyville", "s1"}, {"springfield", "s3"}, {"springfield", "nope"}} {
		if r, ok, err := s.Get(ctx, c.ws, c.id); err != nil || ok {
			t.Fatalf("%s's %s: %+v, %v, %v", c.ws, c.id, r, ok, err)
		}
	}
	if r, ok, err := s.Score(ctx, "s3"); err != nil || !ok || r.ID != "s3" {
		t.Fatalf("the delivery reads a score by id: %+v, %v, %v", r, ok, err)
	}
}

// A start with another retention (LTI_SCORE_RETENTION) moves the TTL of
// every collection's expiry index; the scores kept stay.
func TestRetentionMovesAtStart(t *testing.T) {
	s, db := newStore(t)
	ctx := context.Background()
	add(t, s, score("s1", "q1", time.Now())) // young, whatever the TTL monitor's clock
	for _, r := range []time.Duration{200 * time.Hour, retention} {
		if err := scorestore.New(db, r).Prepare(ctx); err != nil {
			t.Fatalf("a start with a retention of %s: %v", r, err)
		}
		for _, c := range []string{scorestore.ScoresCollection, scorestore.QueuesCollection, scorestore.LineItemsCollection} {
			indexcheck.WantTTL(t, db.Collection(c), "expiry", int32(r/time.Second))
		}
	}
	if _, ok, err := s.Score(ctx, "s1"); err != nil || !ok {
		t.Fatalf("the score after the retention moved: %v, %v", ok, err)
	}
}

// Scores leave a queue one at a time, in the order they came; a leased
// queue is no one else's, and a lost lease settles nothing.
func TestQueueOrder(t *testing.T) {
	s, _ := newStore(t)
	add(t, s, score("a1", "qa", t0), score("a2", "qa", t0), score("b1", "qb", t0.Add(time.Second)), score("a3", "qa", t0.Add(2*time.Second)))
	now := t0.Add(3 * time.Second)
	qa, ok := claim(t, s, "replica-a", now)
	if !ok || qa.ID != "qa" || qa.Head != "a1" || qa.Lease.Owner != "replica-a" || qa.Lease.Token == "" || !qa.Lease.Until.Equal(now.Add(lease)) {
		t.Fatalf("first claim: %+v, %v", qa, ok)
	}
	qb, ok := claim(t, s, "replica-b", now)
	if !ok || qb.ID != "qb" || qb.Head != "b1" {
		t.Fatalf("second claim: %+v, %v", qb, ok)
	}
	if q, ok := claim(t, s, "replica-c", now); ok {
		t.Fatalf("a leased queue was claimed again: %+v", q)
	}
	stale := qa
	stale.Lease.Token = "another"
	if ok, err := s.Settle(context.Background(), stale, ltiapp.ScoreSettlement{Done: true}, now); err != nil || ok {
		t.Fatalf("a settle without the lease: %v, %v", ok, err)
	}
	var heads []string
	for range 3 {
		heads = append(heads, qa.Head)
		stamp := now.Add(time.Duration(len(heads)) * time.Millisecond)
		settle(t, s, qa, ltiapp.ScoreSettlement{Done: true, LastTimestamp: stamp}, now)
		// A settle sent twice takes one score out.
		if ok, err := s.Settle(context.Background(), qa, ltiapp.ScoreSettlement{Done: true}, now); err != nil || ok {
			t.Fatalf("a second settle of one head: %v, %v", ok, err)
		}
		if qa, ok = claim(t, s, "replica-a", now); !ok && len(heads) < 3 {
			t.Fatalf("the queue is not due after a score left it")
		}
		if ok && (qa.ID != "qa" || !qa.LastTimestamp.Equal(stamp)) {
			t.Fatalf("claimed %+v after %s", qa, heads)
		}
	}
	if !slices.Equal(heads, []string{"a1", "a2", "a3"}) {
		t.Fatalf("delivered %v", heads)
	}
}

// A score held back waits for its retry, scores joining meanwhile too;
// an empty queue goes idle, keeping its last timestamp, and is due again
// as soon as a score joins it.
func TestBackoffAndIdle(t *testing.T) {
	s, db := newStore(t)
	add(t, s, score("a1", "qa", t0))
	q, _ := claim(t, s, "replica-a", t0)
	retry := t0.Add(5 * time.Second)
	settle(t, s, q, ltiapp.ScoreSettlement{RetryAt: retry, LastTimestamp: t0.Add(time.Millisecond), LineItem: "https://lms.example.edu/li/1"}, t0)
	add(t, s, score("a2", "qa", t0.Add(time.Second)))
	if q, ok := claim(t, s, "replica-b", retry.Add(-time.Millisecond)); ok {
		t.Fatalf("claimed before its retry: %+v", q)
	}
	q, ok := claim(t, s, "replica-b", retry)
	if !ok || q.Head != "a1" || q.LineItem != "https://lms.example.edu/li/1" || !q.LastTimestamp.Equal(t0.Add(time.Millisecond)) {
		t.Fatalf("after the retry's wait: %+v, %v", q, ok)
	}
	settle(t, s, q, ltiapp.ScoreSettlement{Done: true, LastTimestamp: t0.Add(time.Millisecond)}, retry)
	q, _ = claim(t, s, "replica-b", retry)
	settle(t, s, q, ltiapp.ScoreSettlement{Done: true, LastTimestamp: t0.Add(2 * time.Millisecond)}, retry)
	if q, ok := claim(t, s, "replica-b", retry.Add(time.Hour)); ok {
		t.Fatalf("an empty queue was claimed: %+v", q)
	}
	var idle bson.M
	if err := db.Collection(scorestore.QueuesCollection).FindOne(context.Background(), bson.D{{Key: "_id", Value: "qa"}}).Decode(&idle); err != nil {
		t.Fatal(err)
	}
	if idle["idleSince"] == nil || idle["backlog"] != int32(0) {
		t.Fatalf("an empty queue: %v", idle)
	}
	later := retry.Add(time.Hour)
	add(t, s, score("a3", "qa", later))
	q, ok = claim(t, s, "replica-a", later)
	if !ok || q.Head != "a3" || !q.LastTimestamp.Equal(t0.Add(2*time.Millisecond)) {
		t.Fatalf("a score joining an idle queue: %+v, %v", q, ok)
	}
	// A queue claimed empty (a settle cut short between its two writes)
	// settles idle.
	settle(t, s, q, ltiapp.ScoreSettlement{Done: true}, later)
	if err := db.Collection(scorestore.QueuesCollection).FindOne(context.Background(), bson.D{{Key: "_id", Value: "qa"}}).Decode(&idle); err != nil {
		t.Fatal(err)
	}
	if idle["idleSince"] == nil {
		t.Fatalf("not idle: %v", idle)
	}
}

// A queue takes ScoreBacklogMax scores; the next is refused and not kept.
func TestBacklog(t *testing.T) {
	s, _ := newStore(t)
	for i := range ltiapp.ScoreBacklogMax {
		add(t, s, score(fmt.Sprint("s", i), "qa", t0))
	}
	err := s.Add(context.Background(), score("over", "qa", t0))
	if !errors.Is(err, ltiapp.ErrScoreBacklog) {
		t.Fatalf("over the backlog: %v", err)
	}
	if _, ok, err := s.Score(context.Background(), "over"); err != nil || ok {
		t.Fatalf("a refused score was kept: %v, %v", ok, err)
	}
	add(t, s, score("elsewhere", "qb", t0))
	q, _ := claim(t, s, "replica-a", t0)
	settle(t, s, q, ltiapp.ScoreSettlement{Done: true}, t0)
	add(t, s, score("again", q.ID, t0))
}

// Scores added at once to a new queue are all queued, each once.
func TestConcurrentAdds(t *testing.T) {
	s, _ := newStore(t)
	const n = 8
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for i := range n {
		wg.Go(func() { errs <- s.Add(context.Background(), score(fmt.Sprint("s", i), "qa", t0)) })
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	var heads []string
	for range n {
		q, ok := claim(t, s, "replica-a", t0)
		if !ok {
			t.Fatalf("queue not due after %v", heads)
		}
		heads = append(heads, q.Head)
		settle(t, s, q, ltiapp.ScoreSettlement{Done: true}, t0)
	}
	slices.Sort(heads)
	if len(slices.Compact(heads)) != n {
		t.Fatalf("delivered %v", heads)
	}
}

// An attempt's outcome is recorded on a pending score only: one that was
// delivered or failed stays so.
func TestProgress(t *testing.T) {
	s, _ := newStore(t)
	ctx := context.Background()
	add(t, s, score("s1", "qa", t0))
	stamp := t0.Add(time.Second)
	for _, p := range []ltiapp.ScoreProgress{
		{Status: ltiapp.ScorePending, Attempts: 1, Reason: "the platform is throttling", Timestamp: stamp, At: t0.Add(time.Second)},
		{Status: ltiapp.ScoreDelivered, Attempts: 2, Timestamp: stamp, At: t0.Add(2 * time.Second)},
		{Status: ltiapp.ScoreFailed, Attempts: 3, Reason: "late", At: t0.Add(3 * time.Second)},
	} {
		if err := s.Progress(ctx, "s1", p); err != nil {
			t.Fatal(err)
		}
	}
	r, _, err := s.Score(ctx, "s1")
	if err != nil || r.Status != ltiapp.ScoreDelivered || r.Attempts != 2 || !r.Timestamp.Equal(stamp) || !r.UpdatedAt.Equal(t0.Add(2*time.Second)) {
		t.Fatalf("%+v, %v", r, err)
	}
}

// One replica at a time has the right to find or make a resource link's
// line item; a right let lapse is taken over; once recorded, the line
// item is every claimer's answer.
func TestLineItemClaims(t *testing.T) {
	s, _ := newStore(t)
	l := s.LineItems()
	ctx := context.Background()
	const n = 6
	tokens := make(chan string, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			found, token, err := l.Claim(ctx, "link-1", fmt.Sprint("replica-", i), t0, t0.Add(lease))
			if err != nil || found != "" {
				t.Errorf("claim: %q, %v", found, err)
			}
			if token != "" {
				tokens <- token
			}
		})
	}
	wg.Wait()
	close(tokens)
	var held []string
	for tok := range tokens {
		held = append(held, tok)
	}
	if len(held) != 1 {
		t.Fatalf("%d claimers got the right", len(held))
	}
	// Lapsed, the right goes to the next claimer; the first's record is
	// then refused.
	found, token, err := l.Claim(ctx, "link-1", "replica-x", t0.Add(lease), t0.Add(2*lease))
	if err != nil || found != "" || token == "" || token == held[0] {
		t.Fatalf("take-over: %q, %q, %v", found, token, err)
	}
	if err := l.Record(ctx, "link-1", held[0], "https://lms.example.edu/li/stale"); err != nil {
		t.Fatal(err)
	}
	// Given up, the right goes to the next claimer at once.
	if err := l.Release(ctx, "link-1", token); err != nil {
		t.Fatal(err)
	}
	found, token, err = l.Claim(ctx, "link-1", "replica-z", t0.Add(lease), t0.Add(2*lease))
	if err != nil || found != "" || token == "" {
		t.Fatalf("after a release: %q, %q, %v", found, token, err)
	}
	if err := l.Record(ctx, "link-1", token, "https://lms.example.edu/li/9?type_id=7"); err != nil {
		t.Fatal(err)
	}
	found, token, err = l.Claim(ctx, "link-1", "replica-y", t0.Add(time.Hour), t0.Add(time.Hour+lease))
	if err != nil || found != "https://lms.example.edu/li/9?type_id=7" || token != "" {
		t.Fatalf("after the record: %q, %q, %v", found, token, err)
	}
}
