package deliverystore

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"slices"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/liveproctor/workspaces/services/workspace/internal/adapters/mongoconn"
	webhookapp "github.com/liveproctor/workspaces/services/workspace/internal/webhook/app"
)

// cursorDoc is a cursor as stored. A cursor is due when nextAttemptAt has
// come and no lease is held (leaseUntil has passed); a claim sets both to
// the lease's end, so a dispatcher that dies holding it leaves it due
// again then.
type cursorDoc struct {
	ID            string     `bson:"_id"`
	Kind          string     `bson:"kind"`
	EndpointID    string     `bson:"endpointId"`
	WorkspaceID   string     `bson:"workspaceId"`
	After         string     `bson:"after"`
	Until         string     `bson:"until,omitempty"`
	Head          *headDoc   `bson:"head,omitempty"`
	FailingSince  *time.Time `bson:"failingSince,omitempty"`
	NextAttemptAt time.Time  `bson:"nextAttemptAt"`
	LeaseOwner    string     `bson:"leaseOwner,omitempty"`
	LeaseToken    string     `bson:"leaseToken,omitempty"`
	LeaseUntil    time.Time  `bson:"leaseUntil"`
	// WokenFor is the latest time a wake asked a live cursor to look at.
	WokenFor  *time.Time `bson:"wokenFor,omitempty"`
	Test      *testDoc   `bson:"test,omitempty"`
	CreatedAt time.Time  `bson:"createdAt"`
}

type headDoc struct {
	MsgID    string `bson:"msgId"`
	Attempts int    `bson:"attempts"`
}

type testDoc struct {
	MsgID string `bson:"msgId"`
	Body  []byte `bson:"body"`
}

// neverLeased is the leaseUntil of a cursor no dispatcher held yet: a
// date (a missing field would match no range).
var neverLeased = time.Unix(0, 0).UTC()

// The _id of a cursor other than the live one names its endpoint, its kind
// and what it delivers, so that asking twice makes one cursor.
func replayID(endpointID, after string) string   { return endpointID + "/replay/" + after }
func resendID(endpointID, eventID string) string { return endpointID + "/resend/" + eventID }
func testID(endpointID, msgID string) string     { return endpointID + "/test/" + msgID }

// Start makes the endpoint's live cursor, delivering the events after
// from; a no-op when it exists (an insert: its _id is the endpoint's).
func (s *Store) Start(ctx context.Context, workspaceID, endpointID, from string) error {
	return s.insert(ctx, "start a webhook's delivery", cursorDoc{
		ID: endpointID, Kind: string(webhookapp.LiveCursor), EndpointID: endpointID, WorkspaceID: workspaceID, After: from,
	})
}

// Resend makes a cursor delivering the event eventID once more.
func (s *Store) Resend(ctx context.Context, workspaceID, endpointID, eventID string) error {
	return s.insert(ctx, "resend an event", cursorDoc{
		ID: resendID(endpointID, eventID), Kind: string(webhookapp.ResendCursor), EndpointID: endpointID, WorkspaceID: workspaceID,
		Until: eventID,
	})
}

// Test makes a cursor delivering a test message.
func (s *Store) Test(ctx context.Context, workspaceID, endpointID, msgID string, body []byte) error {
	return s.insert(ctx, "send a test message", cursorDoc{
		ID: testID(endpointID, msgID), Kind: string(webhookapp.TestCursor), EndpointID: endpointID, WorkspaceID: workspaceID,
		Test: &testDoc{MsgID: msgID, Body: body},
	})
}

// Recover makes a cursor delivering again the events after the id after
// up to where the live cursor stands now; nothing when it stands at or
// before after (the live feed has them still to come).
// ErrEndpointGone when the endpoint has no live cursor.
func (s *Store) Recover(ctx context.Context, workspaceID, endpointID, after string) error {
	var live cursorDoc
	err := s.do(ctx, func(ctx context.Context) error {
		return s.cursors.FindOne(ctx, bson.D{{Key: "_id", Value: endpointID}},
			options.FindOne().SetProjection(bson.D{{Key: "after", Value: 1}})).Decode(&live)
	})
	if errors.Is(err, mongo.ErrNoDocuments) {
		return webhookapp.ErrEndpointGone
	}
	if err != nil {
		return mongoconn.Error("read a webhook's cursor", err)
	}
	if live.After <= after {
		return nil
	}
	return s.insert(ctx, "recover events", cursorDoc{
		ID: replayID(endpointID, after), Kind: string(webhookapp.ReplayCursor), EndpointID: endpointID, WorkspaceID: workspaceID,
		After: after, Until: live.After,
	})
}

// insert stores a new cursor, due now; one that exists (the same request
// made twice) is left as it is.
func (s *Store) insert(ctx context.Context, op string, doc cursorDoc) error {
	now := s.now().UTC()
	doc.NextAttemptAt, doc.LeaseUntil, doc.CreatedAt = now, neverLeased, now
	err := s.do(ctx, func(ctx context.Context) error {
		_, err := s.cursors.InsertOne(ctx, doc)
		return err
	})
	if err != nil && !mongo.IsDuplicateKeyError(err) {
		return mongoconn.Error(op, err)
	}
	return nil
}

// Forget drops every cursor of the endpoint. A dispatcher holding one
// finds its lease lost when it settles.
func (s *Store) Forget(ctx context.Context, endpointID string) error {
	err := s.do(ctx, func(ctx context.Context) error {
		_, err := s.cursors.DeleteMany(ctx, bson.D{{Key: "endpointId", Value: endpointID}})
		return err
	})
	if err != nil {
		return mongoconn.Error("forget a webhook's deliveries", err)
	}
	return nil
}

// Wake brings the idle live cursors of the workspaces forward to at (when
// the events just published will have settled), unless they are due
// sooner; a cursor waiting on a retry is left to its backoff. Each keeps
// the latest time it was woken for (wokenFor), so that a dispatcher
// looking before the last of several events settled, or holding the
// cursor while a wake came, does not settle it for a long idle wait.
func (s *Store) Wake(ctx context.Context, workspaceIDs []string, at time.Time) error {
	if len(workspaceIDs) == 0 {
		return nil
	}
	err := s.do(ctx, func(ctx context.Context) error {
		_, err := s.cursors.UpdateMany(ctx, bson.D{
			{Key: "kind", Value: string(webhookapp.LiveCursor)},
			{Key: "head.msgId", Value: nil},
			{Key: "workspaceId", Value: bson.D{{Key: "$in", Value: workspaceIDs}}},
		}, bson.D{
			{Key: "$min", Value: bson.D{{Key: "nextAttemptAt", Value: at.UTC()}}},
			{Key: "$max", Value: bson.D{{Key: "wokenFor", Value: at.UTC()}}},
		})
		return err
	})
	if err != nil {
		return mongoconn.Error("wake webhooks' deliveries", err)
	}
	return nil
}

// Claim leases the cursor due longest to owner until until: one
// findAndModify, atomic on MongoDB, so of dispatchers racing for a cursor
// one gets it.
func (s *Store) Claim(ctx context.Context, owner string, now, until time.Time) (webhookapp.Cursor, bool, error) {
	token := make([]byte, 16)
	_, _ = rand.Read(token) // crypto/rand.Read never fails
	var doc cursorDoc
	err := s.do(ctx, func(ctx context.Context) error {
		return s.cursors.FindOneAndUpdate(ctx,
			bson.D{
				{Key: "nextAttemptAt", Value: bson.D{{Key: "$lte", Value: now.UTC()}}},
				{Key: "leaseUntil", Value: bson.D{{Key: "$lte", Value: now.UTC()}}},
			},
			bson.D{{Key: "$set", Value: bson.D{
				{Key: "leaseOwner", Value: owner},
				{Key: "leaseToken", Value: hex.EncodeToString(token)},
				{Key: "leaseUntil", Value: until.UTC()},
				{Key: "nextAttemptAt", Value: until.UTC()},
			}}},
			options.FindOneAndUpdate().SetSort(bson.D{{Key: "nextAttemptAt", Value: 1}}).SetReturnDocument(options.After),
		).Decode(&doc)
	})
	if errors.Is(err, mongo.ErrNoDocuments) {
		return webhookapp.Cursor{}, false, nil
	}
	if err != nil {
		return webhookapp.Cursor{}, false, mongoconn.Error("claim a webhook's cursor", err)
	}
	return doc.cursor(), true, nil
}

// Settle stores what c's attempt left, ending its lease at now, with one
// write conditional on the lease's token. An idle settle is also
// conditional on the wokenFor c was claimed with: when a wake came
// meanwhile, a second write settles it keeping the time the wake set.
func (s *Store) Settle(ctx context.Context, c webhookapp.Cursor, st webhookapp.Settlement, now time.Time) (bool, error) {
	set := bson.D{{Key: "after", Value: st.After}, {Key: "leaseUntil", Value: now.UTC()}}
	var unset bson.D
	if st.Head != nil {
		set = append(set, bson.E{Key: "head", Value: headDoc{MsgID: st.Head.MsgID, Attempts: st.Head.Attempts}})
	} else {
		unset = append(unset, bson.E{Key: "head", Value: ""})
	}
	if !st.FailingSince.IsZero() {
		set = append(set, bson.E{Key: "failingSince", Value: st.FailingSince.UTC()})
	} else {
		unset = append(unset, bson.E{Key: "failingSince", Value: ""})
	}
	held := bson.D{{Key: "_id", Value: c.ID}, {Key: "leaseToken", Value: c.Lease.Token}}
	due := slices.Concat(set, bson.D{{Key: "nextAttemptAt", Value: st.NextAttemptAt.UTC()}})
	filter := held
	if st.Idle {
		var wokenFor any // a cursor never woken has no wokenFor, which null matches
		if !c.WokenFor.IsZero() {
			wokenFor = c.WokenFor.UTC()
		}
		filter = slices.Concat(held, bson.D{{Key: "wokenFor", Value: wokenFor}})
	}
	settled, err := s.settle(ctx, filter, due, unset)
	if err == nil && !settled && st.Idle {
		settled, err = s.settle(ctx, held, set, unset)
	}
	return settled, err
}

// settle is one conditional write of a settle; false when it matched
// nothing.
func (s *Store) settle(ctx context.Context, filter, set, unset bson.D) (bool, error) {
	update := bson.D{{Key: "$set", Value: set}}
	if len(unset) > 0 {
		update = append(update, bson.E{Key: "$unset", Value: unset})
	}
	var res *mongo.UpdateResult
	err := s.do(ctx, func(ctx context.Context) (err error) {
		res, err = s.cursors.UpdateOne(ctx, filter, update)
		return err
	})
	if err != nil {
		return false, mongoconn.Error("settle a webhook's cursor", err)
	}
	return res.MatchedCount == 1, nil
}

// Drop removes c, if its lease still holds.
func (s *Store) Drop(ctx context.Context, c webhookapp.Cursor) error {
	err := s.do(ctx, func(ctx context.Context) error {
		_, err := s.cursors.DeleteOne(ctx, bson.D{{Key: "_id", Value: c.ID}, {Key: "leaseToken", Value: c.Lease.Token}})
		return err
	})
	if err != nil {
		return mongoconn.Error("drop a webhook's cursor", err)
	}
	return nil
}

func (d cursorDoc) cursor() webhookapp.Cursor {
	c := webhookapp.Cursor{
		ID: d.ID, Kind: webhookapp.CursorKind(d.Kind), WorkspaceID: d.WorkspaceID, EndpointID: d.EndpointID,
		After: d.After, Until: d.Until, CreatedAt: d.CreatedAt,
		Lease: webhookapp.Lease{Owner: d.LeaseOwner, Token: d.LeaseToken, Until: d.LeaseUntil},
	}
	if d.WokenFor != nil {
		c.WokenFor = *d.WokenFor
	}
	if d.Head != nil {
		c.Head = &webhookapp.Head{MsgID: d.Head.MsgID, Attempts: d.Head.Attempts}
	}
	if d.FailingSince != nil {
		c.FailingSince = *d.FailingSince
	}
	if d.Test != nil {
		c.Test = &webhookapp.TestMessage{MsgID: d.Test.MsgID, Body: d.Test.Body}
	}
	return c
}
