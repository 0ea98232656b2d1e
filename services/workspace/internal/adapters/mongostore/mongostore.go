// Package mongostore stores workspaces in MongoDB through the official v2
// driver, the way MongoDB's own engineers would: one document per
// workspace, changed by one conditional write, and an index behind every
// query (indexes_mongo.go lists them and the query each one serves).
//
// The collections:
//
//   - workspaces: one document per workspace (_id is its id), with its key
//     pairs, its registration codes and the events of its changes not yet
//     published (its outbox) embedded;
//   - app_keys and registration_codes: one reservation per app key or code
//     (_id is the key or code), which is what makes them unique store-wide:
//     a unique index over array elements would be enough on MongoDB, but a
//     retired app key must never be issued again after its pair is gone;
//   - lti_registrations: one reservation per LTI 1.3 (issuer, clientId)
//     pair (_id is a digest of the pair), naming the workspace and the
//     registration that hold it (lti_mongo.go);
//   - events: the audit trail (events_mongo.go).
//
// There are no multi-document transactions, so a create writes the
// reservations first and the workspace document last. The workspace insert
// is the commit point: a reservation whose workspace does not list it is a
// leftover that authenticates nothing (GetByAppKey reads the workspaces)
// and that the create removes when it fails, unless the insert's outcome is
// unknown (the store went away meanwhile): then it stays.
//
// With a breaker (WithBreaker), every operation goes through it: while the
// store is unreachable, operations fail at once as Unavailable instead of
// each waiting for server selection, and an operation in flight when the
// breaker opens ends then (see package breaker).
package mongostore

import (
	"context"
	"errors"
	"slices"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/liveproctor/workspaces/pkg/breaker"
	"github.com/liveproctor/workspaces/services/workspace/internal/adapters/mongoconn"
	"github.com/liveproctor/workspaces/services/workspace/internal/domain"
)

// Collection names.
const (
	WorkspacesCollection        = "workspaces"
	EventsCollection            = "events"
	AppKeysCollection           = "app_keys"
	RegistrationCodesCollection = "registration_codes"
	LTIRegistrationsCollection  = "lti_registrations"
)

// cleanupTimeout bounds the removal of a failed create's reservations, which
// runs even when the request's context has ended.
const cleanupTimeout = 5 * time.Second

// Repository is a domain.Repository and an app.EventLog on a MongoDB
// database.
type Repository struct {
	workspaces *mongo.Collection
	appKeys    *mongo.Collection
	codes      *mongo.Collection
	lti        *mongo.Collection
	events     *mongo.Collection
	// retention is how long events are kept (WithEventRetention): the
	// expireAfterSeconds of the events' TTL index.
	retention time.Duration
	now       func() time.Time
	breaker   *breaker.Breaker // nil: operations go straight to the store
}

var _ domain.Repository = (*Repository)(nil)

// Option changes how New builds a Repository.
type Option func(*Repository)

// WithBreaker sends every operation through b, which the caller probes
// (with Ping) and builds with mongoconn.Unreachable as its classifier.
func WithBreaker(b *breaker.Breaker) Option { return func(r *Repository) { r.breaker = b } }

// WithEventRetention keeps events for d (90 days by default).
func WithEventRetention(d time.Duration) Option {
	return func(r *Repository) {
		if d > 0 {
			r.retention = d
		}
	}
}

// WithClock replaces time.Now for the times the repository stamps itself
// (a reservation's, a retired key's), for tests.
func WithClock(now func() time.Time) Option { return func(r *Repository) { r.now = now } }

// New returns a repository on db. Call Prepare once before serving.
func New(db *mongo.Database, opts ...Option) *Repository {
	r := &Repository{
		workspaces: db.Collection(WorkspacesCollection),
		appKeys:    db.Collection(AppKeysCollection),
		codes:      db.Collection(RegistrationCodesCollection),
		lti:        db.Collection(LTIRegistrationsCollection),
		events:     db.Collection(EventsCollection),
		retention:  90 * 24 * time.Hour,
		now:        time.Now,
	}
	for _, opt := range opts {
		opt(r)
	}
	return r
}

// do runs one driver operation, through the breaker when there is one.
func (r *Repository) do(ctx context.Context, op func(context.Context) error) error {
	if r.breaker == nil {
		return op(ctx)
	}
	return r.breaker.Do(ctx, op)
}

// Create reserves the workspace's app keys and codes, then inserts it: three
// writes, one per collection.
func (r *Repository) Create(ctx context.Context, w *domain.Workspace) error {
	doc := fromWorkspace(w)
	doc.Revision = 1
	keys := make([]string, len(doc.Keys))
	for i, k := range doc.Keys {
		keys[i] = k.AppKey
	}
	now := r.now().UTC()
	var undo []func()
	undoAll := func() {
		for _, u := range undo {
			u()
		}
	}
	for _, res := range []struct {
		c     *mongo.Collection
		ids   []string
		taken error
	}{{r.appKeys, keys, domain.ErrAppKeyTaken}, {r.codes, doc.RegistrationCodes, domain.ErrCodeTaken}} {
		release, err := r.reserve(ctx, res.c, res.ids, doc.ID, now, res.taken)
		if release != nil {
			undo = append(undo, release)
		}
		if err != nil {
			undoAll()
			return err
		}
	}
	err := r.do(ctx, func(ctx context.Context) error {
		_, err := r.workspaces.InsertOne(ctx, doc)
		return err
	})
	if err != nil {
		// A write that may be stored keeps its reservations: a leftover
		// one is harmless (see the package comment), while removing those
		// of a stored workspace would make its key pairs fail for good.
		if !mongoconn.MayHaveApplied(err) {
			undoAll()
		}
		if mongo.IsDuplicateKeyError(err) {
			return domain.ErrIDTaken
		}
		return mongoconn.Error("insert workspace", err)
	}
	return nil
}

// reserve claims ids in c for workspaceID with one ordered insert. It
// returns a function that removes what it inserted (nil when nothing was),
// and taken when one of ids is held by someone already.
func (r *Repository) reserve(ctx context.Context, c *mongo.Collection, ids []string, workspaceID string, now time.Time, taken error) (func(), error) {
	if len(ids) == 0 {
		return nil, nil
	}
	docs := make([]any, len(ids))
	for i, id := range ids {
		docs[i] = reservationDoc{ID: id, WorkspaceID: workspaceID, CreatedAt: now}
	}
	err := r.do(ctx, func(ctx context.Context) error {
		_, err := c.InsertMany(ctx, docs)
		return err
	})
	// An ordered insert stops at its first error: what came before it is in.
	inserted := len(ids)
	var bulk mongo.BulkWriteException
	if errors.As(err, &bulk) && len(bulk.WriteErrors) > 0 {
		inserted = bulk.WriteErrors[0].Index
	} else if err != nil && !mongoconn.MayHaveApplied(err) {
		inserted = 0
	}
	var release func()
	if inserted > 0 {
		mine := ids[:inserted]
		release = func() {
			ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), cleanupTimeout)
			defer cancel()
			// Best effort: a reservation left behind is unreachable (see
			// the package comment) and only costs a document.
			_ = r.do(ctx, func(ctx context.Context) error {
				_, err := c.DeleteMany(ctx, bson.D{{Key: "_id", Value: bson.D{{Key: "$in", Value: mine}}}, {Key: "workspaceId", Value: workspaceID}})
				return err
			})
		}
	}
	switch {
	case err == nil:
		return release, nil
	case mongo.IsDuplicateKeyError(err):
		return release, taken
	default:
		return release, mongoconn.Error("reserve in "+c.Name(), err)
	}
}

// Get returns the workspace with the id, deleted or not.
func (r *Repository) Get(ctx context.Context, id string) (*domain.Workspace, error) {
	return r.findOne(ctx, bson.D{{Key: "_id", Value: id}}, "find workspace")
}

// GetMany returns the workspaces with the ids that exist, deleted or not,
// by id, in one read.
func (r *Repository) GetMany(ctx context.Context, ids ...string) (map[string]*domain.Workspace, error) {
	var docs []workspaceDoc
	err := r.do(ctx, func(ctx context.Context) error {
		cur, err := r.workspaces.Find(ctx, bson.D{{Key: "_id", Value: bson.D{{Key: "$in", Value: slices.Compact(slices.Sorted(slices.Values(ids)))}}}})
		if err != nil {
			return err
		}
		return cur.All(ctx, &docs)
	})
	if err != nil {
		return nil, mongoconn.Error("find workspaces", err)
	}
	out := make(map[string]*domain.Workspace, len(docs))
	for i := range docs {
		out[docs[i].ID] = docs[i].toWorkspace()
	}
	return out, nil
}

// GetByAppKey returns the workspace whose key pairs list appKey, through the
// index on the pairs' app keys: a reservation no workspace lists (a
// leftover, or a revoked pair's) finds nothing.
func (r *Repository) GetByAppKey(ctx context.Context, appKey string) (*domain.Workspace, error) {
	return r.findOne(ctx, bson.D{{Key: "keys.appKey", Value: appKey}}, "find workspace by app key")
}

func (r *Repository) findOne(ctx context.Context, filter bson.D, op string) (*domain.Workspace, error) {
	var doc workspaceDoc
	err := r.do(ctx, func(ctx context.Context) error {
		return r.workspaces.FindOne(ctx, filter).Decode(&doc)
	})
	if errors.Is(err, mongo.ErrNoDocuments) {
		return nil, domain.ErrNotFound
	}
	if err != nil {
		return nil, mongoconn.Error(op, err)
	}
	return doc.toWorkspace(), nil
}

// Update writes w's mutable fields, and appends the events w recorded to the
// outbox, in one write that matches only while the stored revision is
// w.Revision(). When it matches nothing, one read tells a missing
// workspace from a changed one.
func (r *Repository) Update(ctx context.Context, w *domain.Workspace) (*domain.Workspace, error) {
	d := fromWorkspace(w)
	update := bson.D{
		{Key: "$set", Value: bson.D{
			{Key: "name", Value: d.Name},
			{Key: "nameKey", Value: d.NameKey},
			{Key: "type", Value: d.Type},
			{Key: "parentId", Value: d.ParentID},
			{Key: "address", Value: d.Address},
			{Key: "products", Value: d.Products},
			{Key: "objectiveDocuments", Value: d.ObjectiveDocuments},
			{Key: "rateLimit", Value: d.RateLimit},
			{Key: "keys", Value: d.Keys},
			{Key: "ltiRegistrations", Value: d.LTIRegistrations},
			{Key: "ltiDeployments", Value: d.LTIDeployments},
			{Key: "webhooks", Value: d.Webhooks},
			{Key: "updatedAt", Value: d.UpdatedAt},
			{Key: "deletedAt", Value: d.DeletedAt},
			{Key: "tokenCutoff", Value: d.TokenCutoff},
		}},
		{Key: "$inc", Value: bson.D{{Key: "revision", Value: int64(1)}}},
	}
	if len(d.Outbox) > 0 {
		update = append(update,
			bson.E{Key: "$push", Value: bson.D{{Key: "outbox", Value: bson.D{{Key: "$each", Value: d.Outbox}}}}},
			bson.E{Key: "$min", Value: bson.D{{Key: "pendingSince", Value: *d.PendingSince}}})
	}
	res, err := r.updateWorkspace(ctx, d.ID, bson.D{{Key: "revision", Value: d.Revision}}, update)
	if err != nil {
		return nil, mongoconn.Error("update workspace", err)
	}
	if res.MatchedCount == 0 {
		return nil, r.missed(ctx, d.ID)
	}
	d.Revision++
	return d.toWorkspace(), nil
}

// updateWorkspace sends one update of workspace id's document, matched by
// _id and cond. Every write of a workspace document after its insert goes
// through here.
func (r *Repository) updateWorkspace(ctx context.Context, id string, cond, update bson.D) (*mongo.UpdateResult, error) {
	var res *mongo.UpdateResult
	err := r.do(ctx, func(ctx context.Context) (err error) {
		res, err = r.workspaces.UpdateOne(ctx, append(bson.D{{Key: "_id", Value: id}}, cond...), update)
		return err
	})
	return res, err
}

// missed answers a conditional write of workspace id that matched nothing:
// ErrNotFound when it does not exist, ErrRevisionChanged when it does.
func (r *Repository) missed(ctx context.Context, id string) error {
	err := r.do(ctx, func(ctx context.Context) error {
		return r.workspaces.FindOne(ctx, bson.D{{Key: "_id", Value: id}},
			options.FindOne().SetProjection(bson.D{{Key: "_id", Value: 1}})).Err()
	})
	switch {
	case errors.Is(err, mongo.ErrNoDocuments):
		return domain.ErrNotFound
	case err != nil:
		return mongoconn.Error("find workspace", err)
	}
	return domain.ErrRevisionChanged
}

// WithExpiredKeys finds workspaces holding a key pair whose expiresAt has
// passed, the longest expired first, on the index of the pairs' expiry.
func (r *Repository) WithExpiredKeys(ctx context.Context, now time.Time, limit int) ([]string, error) {
	ids, err := r.workspaceIDs(ctx, "keys.expiresAt", bson.D{{Key: "$lte", Value: now.UTC()}}, limit)
	if err != nil {
		return nil, mongoconn.Error("find expired key pairs", err)
	}
	slices.Sort(ids)
	return ids, nil
}

// workspaceIDs returns the ids of up to limit workspaces whose field
// matches cond, in the order of field: one query on field's index.
func (r *Repository) workspaceIDs(ctx context.Context, field string, cond bson.D, limit int) ([]string, error) {
	var docs []struct {
		ID string `bson:"_id"`
	}
	err := r.do(ctx, func(ctx context.Context) error {
		cur, err := r.workspaces.Find(ctx, bson.D{{Key: field, Value: cond}},
			options.Find().
				SetSort(bson.D{{Key: field, Value: 1}}).
				SetLimit(int64(max(limit, 1))).
				SetProjection(bson.D{{Key: "_id", Value: 1}}))
		if err != nil {
			return err
		}
		return cur.All(ctx, &docs)
	})
	ids := make([]string, len(docs))
	for i, d := range docs {
		ids[i] = d.ID
	}
	return ids, err
}

// ReserveAppKey claims appKey for workspaceID. The reservation is never
// removed once a pair was listed, so a revoked key is not issued again.
func (r *Repository) ReserveAppKey(ctx context.Context, workspaceID, appKey string) error {
	_, err := r.reserve(ctx, r.appKeys, []string{appKey}, workspaceID, r.now().UTC(), domain.ErrAppKeyTaken)
	return err
}

// RetireAppKeys sets retiredAt on the reservations of appKeys.
func (r *Repository) RetireAppKeys(ctx context.Context, appKeys []string) error {
	if len(appKeys) == 0 {
		return nil
	}
	err := r.do(ctx, func(ctx context.Context) error {
		_, err := r.appKeys.UpdateMany(ctx, bson.D{{Key: "_id", Value: bson.D{{Key: "$in", Value: appKeys}}}},
			bson.D{{Key: "$set", Value: bson.D{{Key: "retiredAt", Value: r.now().UTC()}}}})
		return err
	})
	if err != nil {
		return mongoconn.Error("retire app keys", err)
	}
	return nil
}

// AppKeyReservation reads the reservation of appKey.
func (r *Repository) AppKeyReservation(ctx context.Context, appKey string) (domain.AppKeyReservation, error) {
	var doc reservationDoc
	err := r.do(ctx, func(ctx context.Context) error {
		return r.appKeys.FindOne(ctx, bson.D{{Key: "_id", Value: appKey}}).Decode(&doc)
	})
	if errors.Is(err, mongo.ErrNoDocuments) {
		return domain.AppKeyReservation{}, domain.ErrNotFound
	}
	if err != nil {
		return domain.AppKeyReservation{}, mongoconn.Error("read app key reservation", err)
	}
	return domain.AppKeyReservation{WorkspaceID: doc.WorkspaceID, Retired: doc.RetiredAt != nil}, nil
}

// RecordKeyUse sets the reservation's lastUsedAt: one small write by _id,
// never on the workspace document.
func (r *Repository) RecordKeyUse(ctx context.Context, appKey string, at time.Time) error {
	err := r.do(ctx, func(ctx context.Context) error {
		_, err := r.appKeys.UpdateOne(ctx, bson.D{{Key: "_id", Value: appKey}},
			bson.D{{Key: "$set", Value: bson.D{{Key: "lastUsedAt", Value: at.UTC()}}}})
		return err
	})
	if err != nil {
		return mongoconn.Error("record key use", err)
	}
	return nil
}

// KeysLastUsed reads the reservations of appKeys.
func (r *Repository) KeysLastUsed(ctx context.Context, appKeys []string) (map[string]time.Time, error) {
	out := map[string]time.Time{}
	if len(appKeys) == 0 {
		return out, nil
	}
	var docs []reservationDoc
	err := r.do(ctx, func(ctx context.Context) error {
		cur, err := r.appKeys.Find(ctx, bson.D{{Key: "_id", Value: bson.D{{Key: "$in", Value: appKeys}}}})
		if err != nil {
			return err
		}
		return cur.All(ctx, &docs)
	})
	if err != nil {
		return nil, mongoconn.Error("read key uses", err)
	}
	for _, d := range docs {
		if d.LastUsedAt != nil {
			out[d.ID] = d.LastUsedAt.UTC()
		}
	}
	return out, nil
}

// Ping reports whether the store answers; it is the breaker's probe.
func (r *Repository) Ping(ctx context.Context) error {
	if err := r.workspaces.Database().Client().Ping(ctx, nil); err != nil {
		return mongoconn.Error("ping", err)
	}
	return nil
}
