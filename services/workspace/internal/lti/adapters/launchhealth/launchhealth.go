// Package launchhealth keeps the launch health of LTI 1.3 registrations in
// MongoDB (lti_launch_health): one document per registration under its id,
// with its workspace, when its latest launch was accepted, and its latest
// refusals. Each change is one update that needs no read first: an accepted
// launch raises lastLaunchAt ($max), a refusal is put first among the
// failures, the oldest beyond ltidomain.MaxRecentFailures cut ($push with
// $position and $slice); both make the document when it is missing
// (upsert). Replicas recording at once lose nothing, and no document grows
// past its cap.
//
// Every query goes by _id, so the collection has no other index. A
// document goes with its registration (Forget, when the registration is
// deleted); one left behind (a delete that stopped before it, a refusal
// recorded while the registration was being deleted) is never read again,
// since a registration's id is never reused, and is bounded by the cap.
package launchhealth

import (
	"context"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/liveproctor/workspaces/pkg/breaker"
	"github.com/liveproctor/workspaces/services/workspace/internal/adapters/mongoconn"
	ltiapp "github.com/liveproctor/workspaces/services/workspace/internal/lti/app"
	ltidomain "github.com/liveproctor/workspaces/services/workspace/internal/lti/domain"
)

// Collection is the launch health's collection.
const Collection = "lti_launch_health"

// Store is the registrations' launch health on a MongoDB database.
type Store struct {
	c  *mongo.Collection
	do mongoconn.Do
}

var _ ltiapp.LaunchHealthStore = (*Store)(nil)

// Option changes how New builds a Store.
type Option func(*Store)

// WithBreaker sends every operation through b (the workspace store's: the
// same database).
func WithBreaker(b *breaker.Breaker) Option {
	return func(s *Store) { s.do = mongoconn.Through(b) }
}

// New returns a store on db. It has no index to prepare: every query goes
// by _id.
func New(db *mongo.Database, opts ...Option) *Store {
	s := &Store{c: db.Collection(Collection), do: mongoconn.Through(nil)}
	for _, o := range opts {
		o(s)
	}
	return s
}

// healthDoc is a registration's launch health as stored.
type healthDoc struct {
	ID           string       `bson:"_id"` // the registration's
	WorkspaceID  string       `bson:"workspaceId"`
	LastLaunchAt time.Time    `bson:"lastLaunchAt,omitempty"`
	Failures     []failureDoc `bson:"failures,omitempty"`
}

type failureDoc struct {
	At        time.Time `bson:"at"`
	Reason    string    `bson:"reason"`
	RequestID string    `bson:"requestId,omitempty"`
}

// of is the filter of workspaceID's registration registrationID: the
// workspace is part of it, so that no answer ever holds another
// workspace's record, and an upsert writes it into a new document.
func of(workspaceID, registrationID string) bson.D {
	return bson.D{{Key: "_id", Value: registrationID}, {Key: "workspaceId", Value: workspaceID}}
}

// Accepted raises the registration's lastLaunchAt to at.
func (s *Store) Accepted(ctx context.Context, workspaceID, registrationID string, at time.Time) error {
	err := s.do(ctx, func(ctx context.Context) error {
		_, err := s.c.UpdateOne(ctx, of(workspaceID, registrationID),
			bson.D{{Key: "$max", Value: bson.D{{Key: "lastLaunchAt", Value: at}}}}, options.UpdateOne().SetUpsert(true))
		return err
	})
	if err != nil {
		return mongoconn.Error("record an accepted LTI launch", err)
	}
	return nil
}

// Refused puts f first among the failures of each registration, in one
// update command of one statement per registration.
func (s *Store) Refused(ctx context.Context, workspaceID string, registrationIDs []string, f ltidomain.LaunchFailure) error {
	push := bson.D{{Key: "$push", Value: bson.D{{Key: "failures", Value: bson.D{
		{Key: "$each", Value: bson.A{failureDoc{At: f.At, Reason: f.Reason, RequestID: f.RequestID}}},
		{Key: "$position", Value: 0},
		{Key: "$slice", Value: ltidomain.MaxRecentFailures},
	}}}}}
	models := make([]mongo.WriteModel, len(registrationIDs))
	for i, id := range registrationIDs {
		models[i] = mongo.NewUpdateOneModel().SetFilter(of(workspaceID, id)).SetUpdate(push).SetUpsert(true)
	}
	err := s.do(ctx, func(ctx context.Context) error {
		_, err := s.c.BulkWrite(ctx, models, options.BulkWrite().SetOrdered(false))
		return err
	})
	if err != nil {
		return mongoconn.Error("record a refused LTI launch", err)
	}
	return nil
}

// Health reads the records of workspaceID's registrations among
// registrationIDs.
func (s *Store) Health(ctx context.Context, workspaceID string, registrationIDs []string) (map[string]ltidomain.LaunchHealth, error) {
	var docs []healthDoc
	err := s.do(ctx, func(ctx context.Context) error {
		cur, err := s.c.Find(ctx, bson.D{
			{Key: "_id", Value: bson.D{{Key: "$in", Value: registrationIDs}}},
			{Key: "workspaceId", Value: workspaceID},
		})
		if err != nil {
			return err
		}
		return cur.All(ctx, &docs)
	})
	if err != nil {
		return nil, mongoconn.Error("read LTI launch health", err)
	}
	out := make(map[string]ltidomain.LaunchHealth, len(docs))
	for _, d := range docs {
		h := ltidomain.LaunchHealth{Failures: make([]ltidomain.LaunchFailure, len(d.Failures))}
		if !d.LastLaunchAt.IsZero() {
			h.LastLaunchAt = d.LastLaunchAt.UTC()
		}
		for i, f := range d.Failures {
			h.Failures[i] = ltidomain.LaunchFailure{At: f.At.UTC(), Reason: f.Reason, RequestID: f.RequestID}
		}
		out[d.ID] = h
	}
	return out, nil
}

// Forget deletes the registration's record.
func (s *Store) Forget(ctx context.Context, workspaceID, registrationID string) error {
	err := s.do(ctx, func(ctx context.Context) error {
		_, err := s.c.DeleteOne(ctx, of(workspaceID, registrationID))
		return err
	})
	if err != nil {
		return mongoconn.Error("forget a deleted LTI registration's launch health", err)
	}
	return nil
}
