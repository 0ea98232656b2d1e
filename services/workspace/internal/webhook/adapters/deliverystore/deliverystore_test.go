package deliverystore_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"

	"github.com/liveproctor/workspaces/pkg/fault"
	"github.com/liveproctor/workspaces/pkg/testenv"
	"github.com/liveproctor/workspaces/services/workspace/internal/adapters/mongoconn/indexcheck"
	"github.com/liveproctor/workspaces/services/workspace/internal/adapters/mongoconn/mongotest"
	"github.com/liveproctor/workspaces/services/workspace/internal/webhook/adapters/deliverystore"
	webhookapp "github.com/liveproctor/workspaces/services/workspace/internal/webhook/app"
)

// One FerretDB serves every test of the package; each test gets its own
// database. Every command sent through its client is checked against the
// store's declared indexes (indexcheck). Its TTL monitor runs every
// 100 ms, so that TestAttemptsRetention sees attempts expire.
var (
	commands = indexcheck.NewLog(deliverystore.DeclaredIndexes(), "find", "findAndModify", "update", "delete")
	env      = mongotest.New(mongotest.Options{Name: "deliverystore", TTLMonitorInterval: 100 * time.Millisecond, Commands: commands})
)

func TestMain(m *testing.M) {
	os.Exit(env.Run(m))
}

// newStore is a prepared store on a database of its own.
func newStore(t *testing.T, opts ...deliverystore.Option) (*deliverystore.Store, *mongo.Database) {
	t.Helper()
	db := env.Database(t)
	s := deliverystore.New(db, opts...)
	if err := s.Prepare(context.Background()); err != nil {
		t.Fatal(err)
	}
	return s, db
}

const lease = 30 * time.Second

// claim claims a cursor at now for owner, failing the test on an error.
func claim(t *testing.T, s *deliverystore.Store, owner string, now time.Time) (webhookapp.Cursor, bool) {
	t.Helper()
	c, ok, err := s.Claim(context.Background(), owner, now, now.Add(lease))
	if err != nil {
		t.Fatalf("claim: %v", err)
	}
	return c, ok
}

// A live cursor is made once, however often Start runs; claimed, it is
// leased to one owner, and due again only once settled.
func TestStartClaimSettle(t *testing.T) {
	s, _ := newStore(t)
	ctx := context.Background()
	for range 2 {
		if err := s.Start(ctx, "ws", "ep1", "0190"); err != nil {
			t.Fatal(err)
		}
	}
	now := time.Now()
	c, ok := claim(t, s, "replica-a", now)
	if !ok || c.ID != "ep1" || c.Kind != webhookapp.LiveCursor || c.After != "0190" || c.WorkspaceID != "ws" || c.Lease.Owner != "replica-a" || c.Lease.Token == "" {
		t.Fatalf("claimed %+v, %v", c, ok)
	}
	if _, ok := claim(t, s, "replica-b", now); ok {
		t.Fatal("a leased cursor was claimed again")
	}
	failing := now.Add(-time.Minute).Truncate(time.Millisecond)
	settled, err := s.Settle(ctx, c, webhookapp.Settlement{
		After: "0190", Head: &webhookapp.Head{MsgID: "e1", Attempts: 1}, FailingSince: failing, NextAttemptAt: now.Add(5 * time.Second),
	}, now)
	if err != nil || !settled {
		t.Fatalf("settle: %v, %v", settled, err)
	}
	if _, ok := claim(t, s, "replica-b", now.Add(time.Second)); ok {
		t.Fatal("a cursor was claimed before its next attempt")
	}
	c, ok = claim(t, s, "replica-b", now.Add(5*time.Second))
	if !ok || c.Head == nil || *c.Head != (webhookapp.Head{MsgID: "e1", Attempts: 1}) || !c.FailingSince.Equal(failing) {
		t.Fatalf("claimed after the retry's wait: %+v, %v", c, ok)
	}
	settled, err = s.Settle(ctx, c, webhookapp.Settlement{After: "e1", NextAttemptAt: now.Add(5 * time.Second)}, now.Add(5*time.Second))
	if err != nil || !settled {
		t.Fatalf("settle: %v, %v", settled, err)
	}
	c, ok = claim(t, s, "replica-a", now.Add(5*time.Second))
	if !ok || c.After != "e1" || c.Head != nil || !c.FailingSince.IsZero() {
		t.Fatalf("claimed after a success: %+v, %v", c, ok)
	}
}

// Two dispatchers racing for one due cursor: one gets it, every round.
func TestTwoClaimersOneWinner(t *testing.T) {
	s, _ := newStore(t)
	ctx := context.Background()
	for round := range 20 {
		endpoint := fmt.Sprintf("ep%d", round)
		if err := s.Start(ctx, "ws", endpoint, ""); err != nil {
			t.Fatal(err)
		}
		now := time.Now()
		var wins atomic.Int64
		var wg sync.WaitGroup
		for _, owner := range []string{"replica-a", "replica-b"} {
			wg.Go(func() {
				if _, ok := claim(t, s, owner, now); ok {
					wins.Add(1)
				}
			})
		}
		wg.Wait()
		if got := wins.Load(); got != 1 {
			t.Fatalf("round %d: %d claims won, want 1", round, got)
		}
		if err := s.Forget(ctx, endpoint); err != nil {
			t.Fatal(err)
		}
	}
}

// A lease that expires (its holder died) is claimed by another, and the
// first holder's late settle changes nothing.
func TestExpiredLeaseIsClaimedByAnother(t *testing.T) {
	s, _ := newStore(t)
	ctx := context.Background()
	if err := s.Start(ctx, "ws", "ep1", ""); err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	first, ok := claim(t, s, "replica-a", now)
	if !ok {
		t.Fatal("no cursor to claim")
	}
	if _, ok := claim(t, s, "replica-b", now.Add(lease-time.Millisecond)); ok {
		t.Fatal("claimed before the lease ended")
	}
	second, ok := claim(t, s, "replica-b", now.Add(lease))
	if !ok || second.Lease.Owner != "replica-b" || second.Lease.Token == first.Lease.Token {
		t.Fatalf("claim after the lease: %+v, %v", second, ok)
	}
	if settled, err := s.Settle(ctx, first, webhookapp.Settlement{After: "stale", NextAttemptAt: now}, now.Add(lease)); err != nil || settled {
		t.Fatalf("the first holder's settle: %v, %v; want nothing done", settled, err)
	}
	if err := s.Drop(ctx, first); err != nil {
		t.Fatal(err)
	}
	if settled, err := s.Settle(ctx, second, webhookapp.Settlement{After: "e1", NextAttemptAt: now}, now.Add(lease)); err != nil || !settled {
		t.Fatalf("the holder's settle: %v, %v", settled, err)
	}
	if c, ok := claim(t, s, "replica-a", now.Add(lease)); !ok || c.After != "e1" {
		t.Fatalf("after the holder's settle: %+v, %v", c, ok)
	}
}

// A wake brings an idle live cursor of the workspace (or of one it
// manages) forward, never a cursor waiting on a retry, and tells it what
// for; one that comes while a dispatcher holds the cursor survives its
// idle settle.
func TestWake(t *testing.T) {
	s, _ := newStore(t)
	ctx := context.Background()
	for _, ep := range []string{"idle", "retrying", "held", "other"} {
		ws := "ws"
		if ep == "other" {
			ws = "elsewhere"
		}
		if err := s.Start(ctx, ws, ep, ""); err != nil {
			t.Fatal(err)
		}
	}
	now := time.Now()
	later := now.Add(time.Hour)
	settle := func(c webhookapp.Cursor, st webhookapp.Settlement) {
		t.Helper()
		if settled, err := s.Settle(ctx, c, st, now); err != nil || !settled {
			t.Fatalf("settle %s: %v, %v", c.ID, settled, err)
		}
	}
	var held webhookapp.Cursor
	for range 4 {
		c, ok := claim(t, s, "replica-a", now)
		if !ok {
			t.Fatal("a cursor is missing")
		}
		switch c.ID {
		case "retrying":
			settle(c, webhookapp.Settlement{Head: &webhookapp.Head{MsgID: "e1", Attempts: 1}, NextAttemptAt: later})
		case "held":
			held = c
		default:
			settle(c, webhookapp.Settlement{NextAttemptAt: later, Idle: true})
		}
	}
	wakeAt := now.Add(2 * time.Second)
	if err := s.Wake(ctx, []string{"ws", "manager"}, wakeAt); err != nil {
		t.Fatal(err)
	}
	settle(held, webhookapp.Settlement{NextAttemptAt: later, Idle: true})
	var due []string
	for {
		c, ok := claim(t, s, "replica-b", wakeAt)
		if !ok {
			break
		}
		if !c.WokenFor.Equal(wakeAt.Truncate(time.Millisecond)) {
			t.Errorf("%s was woken for %v, want %v", c.ID, c.WokenFor, wakeAt)
		}
		due = append(due, c.ID)
	}
	if len(due) != 2 || !(due[0] == "idle" && due[1] == "held" || due[0] == "held" && due[1] == "idle") {
		t.Fatalf("due after the wake: %v, want idle and held", due)
	}
}

// Forget drops every cursor of the endpoint; its holder's settle then
// changes nothing.
func TestForget(t *testing.T) {
	s, db := newStore(t)
	ctx := context.Background()
	if err := s.Start(ctx, "ws", "ep1", ""); err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	c, _ := claim(t, s, "replica-a", now)
	if err := s.Resend(ctx, "ws", "ep1", "e1"); err != nil {
		t.Fatal(err)
	}
	if err := s.Test(ctx, "ws", "ep1", "msg1", []byte(`{}`)); err != nil {
		t.Fatal(err)
	}
	if err := s.Start(ctx, "ws", "ep2", ""); err != nil {
		t.Fatal(err)
	}
	if err := s.Forget(ctx, "ep1"); err != nil {
		t.Fatal(err)
	}
	if settled, err := s.Settle(ctx, c, webhookapp.Settlement{NextAttemptAt: now}, now); err != nil || settled {
		t.Fatalf("settle of a forgotten cursor: %v, %v", settled, err)
	}
	n, err := db.Collection(deliverystore.CursorsCollection).CountDocuments(ctx, bson.D{{Key: "_id", Value: "ep2"}})
	if err != nil || n != 1 {
		t.Fatalf("the other endpoint's cursor: %d, %v", n, err)
	}
	if _, err := db.Collection(deliverystore.CursorsCollection).DeleteOne(ctx, bson.D{{Key: "_id", Value: "ep2"}}); err != nil {
		t.Fatal(err)
	}
	if c, ok := claim(t, s, "replica-a", now.Add(time.Second)); ok {
		t.Fatalf("claimed %+v after Forget", c)
	}
}

// Resend, Recover and Test make cursors of their own beside the live one,
// once however often they are asked; Recover replays up to where the live
// cursor stands.
func TestCursorsBesideTheLiveOne(t *testing.T) {
	s, _ := newStore(t)
	ctx := context.Background()
	if err := s.Recover(ctx, "ws", "ep1", "e0"); !errors.Is(err, webhookapp.ErrEndpointGone) {
		t.Fatalf("Recover without a live cursor: %v, want ErrEndpointGone", err)
	}
	if err := s.Start(ctx, "ws", "ep1", "e5"); err != nil {
		t.Fatal(err)
	}
	for range 2 {
		for _, err := range []error{
			s.Resend(ctx, "ws", "ep1", "e3"),
			s.Recover(ctx, "ws", "ep1", "e1"),
			s.Recover(ctx, "ws", "ep1", "e5"), // the live feed is there: nothing to replay
			s.Test(ctx, "ws", "ep1", "msg1", []byte(`{"type":"webhook.test"}`)),
		} {
			if err != nil {
				t.Fatal(err)
			}
		}
	}
	got := map[webhookapp.CursorKind]webhookapp.Cursor{}
	now := time.Now()
	for {
		c, ok := claim(t, s, "replica-a", now)
		if !ok {
			break
		}
		if _, twice := got[c.Kind]; twice {
			t.Fatalf("two %s cursors", c.Kind)
		}
		got[c.Kind] = c
	}
	if len(got) != 4 {
		t.Fatalf("cursors: %v, want live, resend, replay and test", got)
	}
	if c := got[webhookapp.ResendCursor]; c.Until != "e3" || c.EndpointID != "ep1" || c.WorkspaceID != "ws" {
		t.Errorf("resend cursor: %+v", c)
	}
	if c := got[webhookapp.ReplayCursor]; c.After != "e1" || c.Until != "e5" {
		t.Errorf("replay cursor: %+v", c)
	}
	if c := got[webhookapp.TestCursor]; c.Test == nil || c.Test.MsgID != "msg1" || string(c.Test.Body) != `{"type":"webhook.test"}` {
		t.Errorf("test cursor: %+v", c)
	}
	for _, c := range got {
		if err := s.Drop(ctx, c); err != nil {
			t.Fatal(err)
		}
	}
	if c, ok := claim(t, s, "replica-a", now.Add(time.Hour)); ok {
		t.Fatalf("claimed %+v after every cursor was dropped", c)
	}
}

// An endpoint's attempts come newest first, in pages that neither skip
// nor repeat one, attempts made in the same millisecond included.
func TestAttemptsPages(t *testing.T) {
	s, _ := newStore(t)
	ctx := context.Background()
	base := time.Now().Truncate(time.Millisecond)
	cursor := webhookapp.Cursor{WorkspaceID: "ws", EndpointID: "ep1"}
	var want []string
	for i := range 7 {
		a := webhookapp.Attempt{EventID: fmt.Sprintf("e%d", i), AttemptedAt: base.Add(time.Duration(i/2) * time.Millisecond), Status: 500, DurationMs: 12, Response: "no"}
		if err := s.Record(ctx, cursor, a); err != nil {
			t.Fatal(err)
		}
		want = append([]string{a.EventID}, want...)
	}
	if err := s.Record(ctx, webhookapp.Cursor{WorkspaceID: "ws", EndpointID: "ep2"}, webhookapp.Attempt{EventID: "x", AttemptedAt: base}); err != nil {
		t.Fatal(err)
	}
	var got []string
	token := ""
	for pages := 0; ; pages++ {
		if pages == 4 {
			t.Fatal("more pages than attempts")
		}
		page, next, err := s.Attempts(ctx, "ep1", token, 3)
		if err != nil {
			t.Fatal(err)
		}
		for _, a := range page {
			got = append(got, a.EventID)
			if a.Status != 500 || a.DurationMs != 12 || a.Response != "no" || a.AttemptedAt.IsZero() {
				t.Fatalf("attempt read back as %+v", a)
			}
		}
		if next == "" {
			break
		}
		token = next
	}
	// Attempts of one millisecond come in the order they were made, the
	// newest first, as their ids have it.
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("attempts %v, want %v", got, want)
	}
	_, _, err := s.Attempts(ctx, "ep1", "not-a-token", 3)
	if kind := fault.KindOf(err); kind != fault.Invalid {
		t.Fatalf("a bad page token: %v (kind %v), want Invalid", err, kind)
	}
}

// Attempts older than WEBHOOK_ATTEMPT_RETENTION are removed by the TTL
// index (every 100 ms on the stand-in in these tests, every minute on
// MongoDB); a start with another retention moves the index's TTL.
func TestAttemptsRetention(t *testing.T) {
	s, db := newStore(t)
	ctx := context.Background()
	indexcheck.WantTTL(t, db.Collection(deliverystore.AttemptsCollection), "expiry", 30*24*60*60)
	if err := deliverystore.New(db, deliverystore.WithAttemptRetention(time.Hour)).Prepare(ctx); err != nil {
		t.Fatal(err)
	}
	indexcheck.WantTTL(t, db.Collection(deliverystore.AttemptsCollection), "expiry", 3600)
	cursor := webhookapp.Cursor{WorkspaceID: "ws", EndpointID: "ep1"}
	now := time.Now()
	for _, a := range []webhookapp.Attempt{{EventID: "old", AttemptedAt: now.Add(-2 * time.Hour)}, {EventID: "young", AttemptedAt: now}} {
		if err := s.Record(ctx, cursor, a); err != nil {
			t.Fatal(err)
		}
	}
	testenv.Eventually(t, time.Minute, func() error {
		page, _, err := s.Attempts(ctx, "ep1", "", 10)
		if err != nil {
			return err
		}
		if len(page) != 1 || page[0].EventID != "young" {
			return fmt.Errorf("attempts %v", page)
		}
		return nil
	}, "the attempt older than the retention removed")
}
