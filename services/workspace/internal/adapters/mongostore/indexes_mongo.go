package mongostore

import (
	"context"
	"fmt"
	"math"
	"slices"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
)

// indexSpec is an index the adapter declares, and the query it is for. Keys
// follow MongoDB's equality–sort–range rule: the fields a query matches
// exactly, then those it sorts by, then those it filters by range or
// pattern. A test (indexrules_test.go) checks every query the adapter sends
// against these.
type indexSpec struct {
	collection string
	name       string
	keys       []string
	unique     bool
	// sparse leaves out documents without the first key: an index of the
	// few workspaces with work pending, not of all of them.
	sparse bool
	// expires makes it a TTL index of the retention.
	expires bool
}

// indexes are every index the adapter declares, besides each collection's
// _id index: what gets, reservations and publishes use.
var indexes = []indexSpec{
	// List: visible to the caller and active (equality), in list order
	// (sort), then the state filter on the index keys; the name search is
	// a pattern on nameKey, also read from the keys.
	{collection: WorkspacesCollection, name: "list", keys: []string{"visibleTo", "deletedAt", "nameKey", "_id", "address.state"}},
	// GetByAppKey: the workspace listing a pair.
	{collection: WorkspacesCollection, name: "app_key", keys: []string{"keys.appKey"}},
	// WithExpiredKeys: pairs past their expiry, the oldest first.
	{collection: WorkspacesCollection, name: "key_expiry", keys: []string{"keys.expiresAt"}},
	// WorkspacesWithLTIIssuer: a login without client_id finds the active
	// workspaces holding its (issuer, deployment id), or registering its
	// issuer when it names no deployment (equalities). The first also
	// finds the documents of earlier versions, which lack ltiDeployments.
	{collection: WorkspacesCollection, name: "lti_deployment", keys: []string{"ltiDeployments", "deletedAt"}},
	{collection: WorkspacesCollection, name: "lti_issuer", keys: []string{"ltiRegistrations.issuer", "deletedAt"}},
	// WorkspacesWithOutbox: outboxes their requests left behind.
	{collection: WorkspacesCollection, name: "pending_events", keys: []string{"pendingSince"}, sparse: true},
	// The public id is unique; ListEvents selects by workspace or manager
	// and pages by id, with the type filter on the keys.
	{collection: EventsCollection, name: "id", keys: []string{"id"}, unique: true},
	{collection: EventsCollection, name: "workspace_events", keys: []string{"workspaceId", "id", "type"}},
	{collection: EventsCollection, name: "managed_events", keys: []string{"managers", "id", "type"}},
	// Retention: the store removes events older than the retention.
	{collection: EventsCollection, name: "expiry", keys: []string{"occurredAt"}, expires: true},
}

// model is the index as createIndexes takes it.
func (ix indexSpec) model(retention time.Duration) mongo.IndexModel {
	keys := make(bson.D, len(ix.keys))
	for i, k := range ix.keys {
		keys[i] = bson.E{Key: k, Value: 1}
	}
	opts := options.Index().SetName(ix.name)
	if ix.unique {
		opts.SetUnique(true)
	}
	if ix.sparse {
		opts.SetSparse(true)
	}
	if ix.expires {
		opts.SetExpireAfterSeconds(ttlSeconds(retention))
	}
	return mongo.IndexModel{Keys: keys, Options: opts}
}

// Prepare readies the store for this version of the service, at every
// start: it creates the indexes that are missing (and moves the events' TTL
// to the configured retention), and gives documents the version before
// 2026-11-28 wrote the field this one reads (CHANGELOG.md).
func (r *Repository) Prepare(ctx context.Context) error {
	db := r.workspaces.Database()
	for _, c := range []string{WorkspacesCollection, EventsCollection, LTIRegistrationsCollection} {
		if err := r.ensureIndexes(ctx, db.Collection(c)); err != nil {
			return err
		}
	}
	return r.upgradeLTIDeployments(ctx)
}

// ensureIndexes creates c's declared indexes that are missing, and moves
// a TTL index to the configured retention. It lists the indexes first:
// that is how it sees a TTL to change (collMod), where createIndexes of
// the same key with another expireAfterSeconds is refused.
func (r *Repository) ensureIndexes(ctx context.Context, c *mongo.Collection) error {
	var existing []mongo.IndexSpecification
	err := r.do(ctx, func(ctx context.Context) (err error) {
		existing, err = c.Indexes().ListSpecifications(ctx)
		return err
	})
	if err != nil {
		return storeError("list "+c.Name()+" indexes", err)
	}
	ttl := ttlSeconds(r.retention)
	var missing []mongo.IndexModel
	for _, ix := range indexes {
		if ix.collection != c.Name() {
			continue
		}
		at := slices.IndexFunc(existing, func(s mongo.IndexSpecification) bool { return s.Name == ix.name })
		switch {
		case at < 0:
			missing = append(missing, ix.model(r.retention))
		case ix.expires && (existing[at].ExpireAfterSeconds == nil || *existing[at].ExpireAfterSeconds != ttl):
			if err := r.setTTL(ctx, c, ix.name, ttl); err != nil {
				return err
			}
		}
	}
	if len(missing) == 0 {
		return nil
	}
	err = r.do(ctx, func(ctx context.Context) error {
		_, err := c.Indexes().CreateMany(ctx, missing)
		return err
	})
	if err != nil {
		return storeError("create "+c.Name()+" indexes", err)
	}
	return nil
}

// ttlSeconds is a retention as a TTL index takes it: whole seconds, at most
// the int32 MongoDB allows (68 years).
func ttlSeconds(retention time.Duration) int32 {
	return int32(min(retention/time.Second, math.MaxInt32))
}

// setTTL changes how long a TTL index keeps documents.
func (r *Repository) setTTL(ctx context.Context, c *mongo.Collection, index string, seconds int32) error {
	err := r.do(ctx, func(ctx context.Context) error {
		return c.Database().RunCommand(ctx, bson.D{
			{Key: "collMod", Value: c.Name()},
			{Key: "index", Value: bson.D{{Key: "name", Value: index}, {Key: "expireAfterSeconds", Value: seconds}}},
		}).Err()
	})
	if err != nil {
		return storeError(fmt.Sprintf("set the TTL of %s.%s", c.Name(), index), err)
	}
	return nil
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
		return storeError("find workspaces to upgrade", err)
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
				return storeError("upgrade workspace", err)
			}
		}
		if len(docs) < upgradeBatch {
			return nil
		}
	}
}
