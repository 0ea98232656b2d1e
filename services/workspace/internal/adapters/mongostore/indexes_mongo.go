package mongostore

import (
	"context"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/liveproctor/workspaces/services/workspace/internal/adapters/mongoconn"
)

// indexes are every index the adapter declares, besides each collection's
// _id index: what gets, reservations and publishes use. A test checks
// every query the adapter sends against them (mongostore_test.go).
var indexes = []mongoconn.Index{
	// List: visible to the caller and active (equality), in list order
	// (sort), then the state filter on the index keys; the name search is
	// a pattern on nameKey, also read from the keys.
	{Collection: WorkspacesCollection, Name: "list", Keys: []string{"visibleTo", "deletedAt", "nameKey", "_id", "address.state"}},
	// GetByAppKey: the workspace listing a pair.
	{Collection: WorkspacesCollection, Name: "app_key", Keys: []string{"keys.appKey"}},
	// WithExpiredKeys: pairs past their expiry, the oldest first.
	{Collection: WorkspacesCollection, Name: "key_expiry", Keys: []string{"keys.expiresAt"}},
	// WorkspacesWithLTIIssuer: a login without client_id finds the active
	// workspaces holding its (issuer, deployment id), or registering its
	// issuer when it names no deployment (equalities). The first also
	// finds the documents of earlier versions, which lack ltiDeployments.
	{Collection: WorkspacesCollection, Name: "lti_deployment", Keys: []string{"ltiDeployments", "deletedAt"}},
	{Collection: WorkspacesCollection, Name: "lti_issuer", Keys: []string{"ltiRegistrations.issuer", "deletedAt"}},
	// WorkspacesWithOutbox: outboxes their requests left behind.
	{Collection: WorkspacesCollection, Name: "pending_events", Keys: []string{"pendingSince"}, Sparse: true},
	// The public id is unique; ListEvents selects by workspace or manager
	// and pages by id, with the type filter on the keys.
	{Collection: EventsCollection, Name: "id", Keys: []string{"id"}, Unique: true},
	{Collection: EventsCollection, Name: "workspace_events", Keys: []string{"workspaceId", "id", "type"}},
	{Collection: EventsCollection, Name: "managed_events", Keys: []string{"managers", "id", "type"}},
	// Retention: the store removes events older than the retention.
	{Collection: EventsCollection, Name: "expiry", Keys: []string{"occurredAt"}, Expires: true},
}

// Prepare readies the store for this version of the service, at every
// start: it creates the indexes that are missing (and moves the events' TTL
// to the configured retention), and gives documents the version before
// 2026-11-28 wrote the field this one reads (CHANGELOG.md).
func (r *Repository) Prepare(ctx context.Context) error {
	db := r.workspaces.Database()
	for _, c := range []string{WorkspacesCollection, EventsCollection, LTIRegistrationsCollection} {
		if err := mongoconn.EnsureIndexes(ctx, r.do, db.Collection(c), indexes, r.retention); err != nil {
			return err
		}
	}
	return r.upgradeLTIDeployments(ctx)
}

// upgradeBatch bounds the documents one read of findToUpgrade returns.
const upgradeBatch = 500

// findToUpgrade reads into docs at most upgradeBatch workspaces that
// filter finds, with the fields of projection.
func (r *Repository) findToUpgrade(ctx context.Context, filter, projection bson.D, docs any) error {
	err := r.do(ctx, func(ctx context.Context) error {
		cur, err := r.workspaces.Find(ctx, filter, options.Find().SetLimit(upgradeBatch).SetProjection(projection))
		if err != nil {
			return err
		}
		return cur.All(ctx, docs)
	})
	if err != nil {
		return mongoconn.Error("find workspaces to upgrade", err)
	}
	return nil
}

// upgradeLTIDeployments gives workspaces written by versions before logins
// read ltiDeployments that field, found on its index (missing is indexed
// as null). The write is conditional on the revision read: an Update in
// between wrote the field itself.
func (r *Repository) upgradeLTIDeployments(ctx context.Context) error {
	for {
		var docs []struct {
			ID               string               `bson:"_id"`
			Revision         int64                `bson:"revision"`
			LTIRegistrations []ltiRegistrationDoc `bson:"ltiRegistrations"`
		}
		err := r.findToUpgrade(ctx, bson.D{{Key: "ltiDeployments", Value: nil}},
			bson.D{{Key: "revision", Value: 1}, {Key: "ltiRegistrations", Value: 1}}, &docs)
		if err != nil {
			return err
		}
		for _, d := range docs {
			set := bson.D{{Key: "ltiDeployments", Value: ltiDeployments(toLTIRegistrations(d.LTIRegistrations))}}
			if _, err := r.updateWorkspace(ctx, d.ID, bson.D{{Key: "revision", Value: d.Revision}}, bson.D{{Key: "$set", Value: set}}); err != nil {
				return mongoconn.Error("upgrade workspace", err)
			}
		}
		if len(docs) < upgradeBatch {
			return nil
		}
	}
}
