// Package launchstore keeps the records of accepted LTI 1.3 resource-link
// launches in MongoDB (lti_launches), one document per launch under its
// launch id, for the vendor's back end to grade the launch and read its
// class while the session lasts and for a grace after it. A TTL index on
// launchedAt removes them after that retention; a read holds them to it
// too, since MongoDB's TTL monitor runs only once a minute.
package launchstore

import (
	"context"
	"errors"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"

	"github.com/liveproctor/workspaces/pkg/breaker"
	"github.com/liveproctor/workspaces/services/workspace/internal/adapters/mongoconn"
	ltiapp "github.com/liveproctor/workspaces/services/workspace/internal/lti/app"
	ltidomain "github.com/liveproctor/workspaces/services/workspace/internal/lti/domain"
)

// Collection is the launches' collection.
const Collection = "lti_launches"

// indexes are every index the store declares besides _id, which its reads
// go by (launchstore_test.go checks them against every query it sends).
var indexes = []mongoconn.Index{
	// Retention: the session's 8 hours and LTI_LAUNCH_GRACE after the
	// launch.
	{Collection: Collection, Name: "expiry", Keys: []string{"launchedAt"}, Expires: true},
}

// Store is the launches' records on a MongoDB database.
type Store struct {
	c         *mongo.Collection
	retention time.Duration
	now       func() time.Time
	do        mongoconn.Do
}

var _ ltiapp.LTI13LaunchStore = (*Store)(nil)

// Option changes how New builds a Store.
type Option func(*Store)

// WithBreaker sends every operation through b (the workspace store's: the
// same database).
func WithBreaker(b *breaker.Breaker) Option {
	return func(s *Store) { s.do = mongoconn.Through(b) }
}

// WithClock replaces time.Now for the retention's reads, for tests.
func WithClock(now func() time.Time) Option { return func(s *Store) { s.now = now } }

// New returns a store on db keeping launches for retention. Call Prepare
// once before use.
func New(db *mongo.Database, retention time.Duration, opts ...Option) *Store {
	s := &Store{c: db.Collection(Collection), retention: retention, now: time.Now, do: mongoconn.Through(nil)}
	for _, o := range opts {
		o(s)
	}
	return s
}

// Prepare creates the indexes that are missing and moves the TTL to the
// configured retention, at every start.
func (s *Store) Prepare(ctx context.Context) error {
	return mongoconn.EnsureIndexes(ctx, s.do, s.c, indexes, s.retention)
}

// launchDoc is a launch as stored.
type launchDoc struct {
	ID             string    `bson:"_id"`
	WorkspaceID    string    `bson:"workspaceId"`
	RegistrationID string    `bson:"registrationId"`
	DeploymentID   string    `bson:"deploymentId"`
	ContextID      string    `bson:"contextId,omitempty"`
	ResourceLinkID string    `bson:"resourceLinkId"`
	Subject        string    `bson:"sub"`
	Email          string    `bson:"email"`
	Roles          []string  `bson:"roles"`
	AGS            agsDoc    `bson:"ags"`
	NRPS           nrpsDoc   `bson:"nrps"`
	ExamConfigID   string    `bson:"examConfigId,omitempty"`
	LaunchedAt     time.Time `bson:"launchedAt"`
}

type agsDoc struct {
	LineItem  string   `bson:"lineItem,omitempty"`
	LineItems string   `bson:"lineItems,omitempty"`
	Scopes    []string `bson:"scopes,omitempty"`
}

type nrpsDoc struct {
	MembershipsURL string `bson:"membershipsUrl,omitempty"`
}

// Put inserts r; its id is random, so an insert is the whole write.
func (s *Store) Put(ctx context.Context, r ltiapp.LTI13LaunchRecord) error {
	d := launchDoc{
		ID: r.ID, WorkspaceID: r.WorkspaceID, RegistrationID: r.RegistrationID, DeploymentID: r.DeploymentID,
		ContextID: r.ContextID, ResourceLinkID: r.ResourceLinkID, Subject: r.Subject, Email: r.Email, Roles: r.Roles,
		AGS:          agsDoc{LineItem: r.Services.LineItem, LineItems: r.Services.LineItems, Scopes: r.Services.Scopes},
		NRPS:         nrpsDoc{MembershipsURL: r.Services.MembershipsURL},
		ExamConfigID: r.ExamConfigID,
		LaunchedAt:   r.LaunchedAt,
	}
	if d.Roles == nil {
		d.Roles = []string{}
	}
	err := s.do(ctx, func(ctx context.Context) error {
		_, err := s.c.InsertOne(ctx, d)
		return err
	})
	if err != nil {
		return mongoconn.Error("insert an LTI launch", err)
	}
	return nil
}

// Get reads a launch by id, of the workspace and within the retention.
func (s *Store) Get(ctx context.Context, workspaceID, id string) (ltiapp.LTI13LaunchRecord, bool, error) {
	var d launchDoc
	err := s.do(ctx, func(ctx context.Context) error {
		return s.c.FindOne(ctx, bson.D{
			{Key: "_id", Value: id},
			{Key: "workspaceId", Value: workspaceID},
			{Key: "launchedAt", Value: bson.D{{Key: "$gt", Value: s.now().Add(-s.retention)}}},
		}).Decode(&d)
	})
	if errors.Is(err, mongo.ErrNoDocuments) {
		return ltiapp.LTI13LaunchRecord{}, false, nil
	}
	if err != nil {
		return ltiapp.LTI13LaunchRecord{}, false, mongoconn.Error("find an LTI launch", err)
	}
	return ltiapp.LTI13LaunchRecord{
		ID: d.ID, WorkspaceID: d.WorkspaceID, RegistrationID: d.RegistrationID, DeploymentID: d.DeploymentID,
		ContextID: d.ContextID, ResourceLinkID: d.ResourceLinkID, Subject: d.Subject, Email: d.Email, Roles: d.Roles,
		Services: ltidomain.LTI13Services{
			LineItem: d.AGS.LineItem, LineItems: d.AGS.LineItems, Scopes: d.AGS.Scopes, MembershipsURL: d.NRPS.MembershipsURL,
		},
		ExamConfigID: d.ExamConfigID,
		LaunchedAt:   d.LaunchedAt.UTC(),
	}, true, nil
}
