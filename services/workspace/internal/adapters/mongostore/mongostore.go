// Package mongostore stores workspaces in MongoDB (or a MongoDB-protocol
// server such as FerretDB) through the official v2 driver.
//
// The collections:
//
//   - workspaces: one document per workspace, with its key pairs and
//     registration codes embedded (_id is the workspace id);
//   - app_keys and registration_codes: one reservation per app key or code
//     (_id is the key or code), which is what makes them unique store-wide;
//   - events: the audit trail (events_mongo.go);
//   - outbox_pending and key_expiries: markers of the background work, so
//     that finding it reads no workspace (markers_mongo.go);
//   - list_chunks, list_changes and store_meta: what lists select and
//     order by, a snapshot of every workspace's entry packed into a few
//     documents and the changes since (list_entries_mongo.go,
//     list_snapshot_mongo.go);
//   - revision_claims: Update's revision check (revision_claims_mongo.go).
//
// On the embedded store (FerretDB v1.24, SQLite) only a filter of a lone
// _id equality reaches an index; any other filter or sort reads every
// document of the collection. So every operation on a request's path is a
// lookup, insert, update or delete by _id.
//
// There are no multi-document transactions, so a create writes the
// reservations first and the workspace document last. The workspace insert
// is the commit point: a reservation whose workspace does not list it is a
// leftover that never authenticates (GetByAppKey checks the workspace) and
// that the create removes when it fails, unless the insert's outcome is
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
	"fmt"
	"regexp"
	"slices"
	"sync/atomic"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
	"go.mongodb.org/mongo-driver/v2/x/mongo/driver/topology"

	"github.com/liveproctor/workspaces/pkg/breaker"
	"github.com/liveproctor/workspaces/pkg/fault"
	"github.com/liveproctor/workspaces/services/workspace/internal/domain"
)

// Collection names.
const (
	WorkspacesCollection        = "workspaces"
	EventsCollection            = "events"
	AppKeysCollection           = "app_keys"
	RegistrationCodesCollection = "registration_codes"
)

// cleanupTimeout bounds the removal of a failed create's reservations, which
// runs even when the request's context has ended.
const cleanupTimeout = 5 * time.Second

// Repository is a domain.Repository on a MongoDB database.
type Repository struct {
	workspaces *mongo.Collection
	appKeys    *mongo.Collection
	codes      *mongo.Collection
	events     *mongo.Collection
	// outboxPending and keyExpiries hold the markers of background work
	// (markers_mongo.go).
	outboxPending *mongo.Collection
	keyExpiries   *mongo.Collection
	// chunks and changes are the list snapshot and the changes since
	// (list_entries_mongo.go); lists use them once entriesReady. meta
	// holds the snapshot's pointer and the compaction's lease, which
	// holder names this repository in. snap is the generation read last.
	chunks       *mongo.Collection
	changes      *mongo.Collection
	meta         *mongo.Collection
	entriesReady atomic.Bool
	snap         atomic.Pointer[snapshot]
	holder       string
	// stopAt, set by tests, ends a compaction at a step (as a crash).
	stopAt func(step string) error
	// claims are Update's revision claims (revision_claims_mongo.go).
	claims  *mongo.Collection
	now     func() time.Time
	breaker *breaker.Breaker // nil: operations go straight to the store
}

var _ domain.Repository = (*Repository)(nil)

// Option changes how New builds a Repository.
type Option func(*Repository)

// WithBreaker sends every operation through b, which the caller probes
// (with Ping) and builds with Unreachable as its classifier.
func WithBreaker(b *breaker.Breaker) Option { return func(r *Repository) { r.breaker = b } }

// New returns a repository on db. Call EnsureIndexes once before serving.
func New(db *mongo.Database, opts ...Option) *Repository {
	r := &Repository{
		workspaces:    db.Collection(WorkspacesCollection),
		appKeys:       db.Collection(AppKeysCollection),
		codes:         db.Collection(RegistrationCodesCollection),
		events:        db.Collection(EventsCollection),
		outboxPending: db.Collection(OutboxPendingCollection),
		keyExpiries:   db.Collection(KeyExpiriesCollection),
		chunks:        db.Collection(ListChunksCollection),
		changes:       db.Collection(ListChangesCollection),
		meta:          db.Collection(StoreMetaCollection),
		holder:        randomHex(),
		claims:        db.Collection(RevisionClaimsCollection),
		now:           time.Now,
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

// EnsureIndexes creates the indexes lists and tenancy checks use, leaving
// those that exist alone, so every start calls it. Uniqueness of ids, app
// keys and codes rests on _id, which needs none.
func (r *Repository) EnsureIndexes(ctx context.Context) error {
	wanted := []struct {
		c       *mongo.Collection
		indexes []namedIndex
	}{
		{r.workspaces, []namedIndex{
			index("managers_order", "managers", "nameKey", "_id"),
			index("list_order", "nameKey", "_id"),
			index("address_state", "address.state"),
		}},
		{r.appKeys, []namedIndex{index("workspace", "workspaceId")}},
		{r.codes, []namedIndex{index("workspace", "workspaceId")}},
		{r.events, eventIndexes()},
	}
	for _, w := range wanted {
		// Asking for an index that exists is a no-op on MongoDB but drops
		// the connection on FerretDB v1.24, so look first.
		existing, err := w.c.Indexes().ListSpecifications(ctx)
		if err != nil {
			return storeError("list "+w.c.Name()+" indexes", err)
		}
		var missing []mongo.IndexModel
		for _, ix := range w.indexes {
			if !slices.ContainsFunc(existing, func(s mongo.IndexSpecification) bool { return s.Name == ix.name }) {
				missing = append(missing, ix.model)
			}
		}
		if len(missing) == 0 {
			continue
		}
		if _, err := w.c.Indexes().CreateMany(ctx, missing); err != nil {
			return storeError("create "+w.c.Name()+" indexes", err)
		}
	}
	return r.buildSnapshot(ctx)
}

// namedIndex is an index model and its name (the driver's options builder
// does not give the name back).
type namedIndex struct {
	name  string
	model mongo.IndexModel
}

// index is an ascending index on fields, named name.
func index(name string, fields ...string) namedIndex {
	keys := make(bson.D, len(fields))
	for i, f := range fields {
		keys[i] = bson.E{Key: f, Value: 1}
	}
	return namedIndex{name: name, model: mongo.IndexModel{Keys: keys, Options: options.Index().SetName(name)}}
}

// Create reserves the workspace's app keys and codes, then inserts it.
func (r *Repository) Create(ctx context.Context, w *domain.Workspace) error {
	now := r.now().UTC()
	doc := fromWorkspace(w)
	doc.Revision = 1
	if err := r.markOutbox(ctx, doc.ID, doc.Outbox); err != nil {
		return err
	}
	if err := r.markKeyExpiry(ctx, &doc); err != nil {
		return err
	}
	var reserved []func(context.Context)
	undo := func() {
		ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), cleanupTimeout)
		defer cancel()
		for _, release := range reserved {
			release(ctx)
		}
	}
	for _, k := range w.Keys() {
		release, err := r.reserve(ctx, r.appKeys, k.AppKey, w.ID(), now, domain.ErrAppKeyTaken)
		if err != nil {
			undo()
			return err
		}
		reserved = append(reserved, release)
	}
	for _, code := range w.RegistrationCodes() {
		release, err := r.reserve(ctx, r.codes, code, w.ID(), now, domain.ErrCodeTaken)
		if err != nil {
			undo()
			return err
		}
		reserved = append(reserved, release)
	}
	err := r.do(ctx, func(ctx context.Context) error {
		_, err := r.workspaces.InsertOne(ctx, doc)
		return err
	})
	if err != nil {
		if !mayHaveApplied(err) {
			undo()
		}
		if mongo.IsDuplicateKeyError(err) {
			return domain.ErrIDTaken
		}
		return storeError("insert workspace", err)
	}
	return r.recordEntry(ctx, &doc)
}

// reserve claims id in c for workspaceID. It returns a function that removes
// the claim again, or taken when someone else holds it.
func (r *Repository) reserve(ctx context.Context, c *mongo.Collection, id, workspaceID string, now time.Time, taken error) (func(context.Context), error) {
	err := r.do(ctx, func(ctx context.Context) error {
		_, err := c.InsertOne(ctx, reservationDoc{ID: id, WorkspaceID: workspaceID, CreatedAt: now})
		return err
	})
	if mongo.IsDuplicateKeyError(err) {
		return nil, taken
	}
	if err != nil {
		return nil, storeError("reserve in "+c.Name(), err)
	}
	return func(ctx context.Context) {
		// Best effort: a reservation left behind is unreachable (see the
		// package comment) and only costs a document.
		_ = r.do(ctx, func(ctx context.Context) error {
			_, err := c.DeleteOne(ctx, bson.D{{Key: "_id", Value: id}, {Key: "workspaceId", Value: workspaceID}})
			return err
		})
	}, nil
}

// Get returns the workspace with the id, deleted or not.
func (r *Repository) Get(ctx context.Context, id string) (*domain.Workspace, error) {
	var doc workspaceDoc
	err := r.do(ctx, func(ctx context.Context) error {
		return r.workspaces.FindOne(ctx, bson.D{{Key: "_id", Value: id}}).Decode(&doc)
	})
	if errors.Is(err, mongo.ErrNoDocuments) {
		return nil, domain.ErrNotFound
	}
	if err != nil {
		return nil, storeError("find workspace", err)
	}
	return doc.toWorkspace(), nil
}

// GetByAppKey follows the key's reservation to its workspace, and answers
// only when that workspace lists the key (so leftovers of a failed create
// never match).
func (r *Repository) GetByAppKey(ctx context.Context, appKey string) (*domain.Workspace, error) {
	var res reservationDoc
	err := r.do(ctx, func(ctx context.Context) error {
		return r.appKeys.FindOne(ctx, bson.D{{Key: "_id", Value: appKey}}).Decode(&res)
	})
	if errors.Is(err, mongo.ErrNoDocuments) {
		return nil, domain.ErrNotFound
	}
	if err != nil {
		return nil, storeError("find app key", err)
	}
	w, err := r.Get(ctx, res.WorkspaceID)
	if err != nil {
		return nil, err
	}
	if _, ok := w.KeyByAppKey(appKey); !ok {
		return nil, domain.ErrNotFound
	}
	return w, nil
}

// List returns active workspaces matching q in (nameKey, _id) order: from
// the list entries once their snapshot is built, from the workspaces until
// then.
func (r *Repository) List(ctx context.Context, q domain.ListQuery) ([]*domain.Workspace, error) {
	if r.entriesReady.Load() {
		v, err := r.readListView(ctx)
		if err == nil {
			return r.listByEntries(ctx, v, q)
		}
		if !errors.Is(err, errNoSnapshot) {
			return nil, err
		}
	}
	filter := bson.A{
		bson.D{{Key: "deletedAt", Value: nil}},
		bson.D{{Key: "$or", Value: bson.A{
			bson.D{{Key: "_id", Value: q.VisibleTo}},
			bson.D{{Key: "managers", Value: q.VisibleTo}},
		}}},
	}
	if q.NameContains != "" {
		filter = append(filter, bson.D{{Key: "nameKey", Value: bson.D{{Key: "$regex", Value: regexp.QuoteMeta(q.NameContains)}}}})
	}
	if len(q.States) > 0 {
		filter = append(filter, bson.D{{Key: "address.state", Value: bson.D{{Key: "$in", Value: q.States}}}})
	}
	if q.After != nil {
		filter = append(filter, bson.D{{Key: "$or", Value: bson.A{
			bson.D{{Key: "nameKey", Value: bson.D{{Key: "$gt", Value: q.After.NameKey}}}},
			bson.D{{Key: "nameKey", Value: q.After.NameKey}, {Key: "_id", Value: bson.D{{Key: "$gt", Value: q.After.ID}}}},
		}}})
	}
	opts := options.Find().
		SetSort(bson.D{{Key: "nameKey", Value: 1}, {Key: "_id", Value: 1}}).
		SetLimit(int64(max(q.Limit, 1)))
	var docs []workspaceDoc
	err := r.do(ctx, func(ctx context.Context) error {
		cur, err := r.workspaces.Find(ctx, bson.D{{Key: "$and", Value: filter}}, opts)
		if err != nil {
			return err
		}
		return cur.All(ctx, &docs)
	})
	if err != nil {
		return nil, storeError("list workspaces", err)
	}
	out := make([]*domain.Workspace, len(docs))
	for i := range docs {
		out[i] = docs[i].toWorkspace()
	}
	return out, nil
}

// Update writes w's mutable fields when the stored revision is w's.
func (r *Repository) Update(ctx context.Context, w *domain.Workspace) (*domain.Workspace, error) {
	d := fromWorkspace(w)
	set := bson.D{
		{Key: "name", Value: d.Name},
		{Key: "nameKey", Value: d.NameKey},
		{Key: "type", Value: d.Type},
		{Key: "parentId", Value: d.ParentID},
		{Key: "address", Value: d.Address},
		{Key: "products", Value: d.Products},
		{Key: "objectiveDocuments", Value: d.ObjectiveDocuments},
		{Key: "rateLimit", Value: d.RateLimit},
		{Key: "keys", Value: d.Keys},
		{Key: "updatedAt", Value: d.UpdatedAt},
		{Key: "deletedAt", Value: d.DeletedAt},
		{Key: "tokenCutoff", Value: d.TokenCutoff},
	}
	update := bson.D{{Key: "$set", Value: set}, {Key: "$inc", Value: bson.D{{Key: "revision", Value: int64(1)}}}}
	if err := r.markOutbox(ctx, d.ID, d.Outbox); err != nil {
		return nil, err
	}
	if err := r.markKeyExpiry(ctx, &d); err != nil {
		return nil, err
	}
	// The revision check is a claim (revision_claims_mongo.go), so the
	// write itself filters on _id alone.
	release, stored, err := r.claimRevision(ctx, d.ID, d.Revision)
	if err != nil {
		return nil, err
	}
	// The change's events go into the outbox by the same write, after
	// those still unpublished; published ones leave it here (the publish
	// never writes the workspace document). With the claim held, no other
	// Update writes the outbox meanwhile.
	outbox, err := r.stillPending(ctx, stored)
	if err != nil {
		release(context.WithoutCancel(ctx))
		return nil, err
	}
	for _, e := range d.Outbox {
		outbox = append(outbox, e)
	}
	set = append(set, bson.E{Key: "outbox", Value: outbox})
	update[0].Value = set
	var res *mongo.UpdateResult
	err = r.do(ctx, func(ctx context.Context) (err error) {
		res, err = r.workspaces.UpdateOne(ctx, bson.D{{Key: "_id", Value: d.ID}}, update)
		return err
	})
	releaseNow := func() {
		ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), cleanupTimeout)
		defer cancel()
		release(ctx)
	}
	if err != nil {
		if !mayHaveApplied(err) {
			releaseNow()
		}
		return nil, storeError("update workspace", err)
	}
	if res.MatchedCount == 0 {
		releaseNow()
		return nil, domain.ErrNotFound
	}
	d.Revision++
	// The revision moved on: a writer that read the old one and claims it
	// now finds the workspace past it (see claimRevision), so the claim
	// need not stay.
	releaseNow()
	if err := r.recordEntry(ctx, &d); err != nil {
		return nil, err
	}
	return d.toWorkspace(), nil
}

// ReserveAppKey claims appKey for workspaceID. The reservation is never
// removed once a pair was listed, so a revoked key is not issued again.
func (r *Repository) ReserveAppKey(ctx context.Context, workspaceID, appKey string) error {
	_, err := r.reserve(ctx, r.appKeys, appKey, workspaceID, r.now().UTC(), domain.ErrAppKeyTaken)
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
		return storeError("retire app keys", err)
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
		return domain.AppKeyReservation{}, storeError("read app key reservation", err)
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
		return storeError("record key use", err)
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
		return nil, storeError("read key uses", err)
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
		return storeError("ping", err)
	}
	return nil
}

// Unreachable reports whether a driver error may mean the store cannot be
// reached (the breaker then probes it): a timeout, a network error, no
// server selected, a disconnected client.
func Unreachable(err error) bool {
	var selection topology.ServerSelectionError
	return mongo.IsTimeout(err) || mongo.IsNetworkError(err) || errors.As(err, &selection) ||
		errors.Is(err, mongo.ErrClientDisconnected)
}

// mayHaveApplied reports whether a write that failed with err may have
// been applied all the same: the store became unreachable, or the call was
// ended, after the write was sent. Its reservations are then kept: a
// leftover reservation is harmless (see the package comment), while
// removing those of a workspace or key that was stored would make its key
// pairs fail to authenticate for good.
func mayHaveApplied(err error) bool {
	return Unreachable(err) || errors.Is(err, breaker.ErrOpen) ||
		errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded)
}

// storeError turns a driver error into a fault: unreachable or slow
// stores, an open breaker and an ended context are Unavailable (the
// caller may retry), anything else Internal.
func storeError(op string, err error) error {
	if Unreachable(err) || errors.Is(err, breaker.ErrOpen) || errors.Is(err, context.Canceled) {
		return fault.Wrap(fault.Unavailable, fmt.Errorf("%s: %w", op, err), "the workspace store is unavailable; retry shortly")
	}
	return fault.Wrap(fault.Internal, fmt.Errorf("%s: %w", op, err), "internal error")
}

// stillPending keeps the outbox entries that are not published yet (their
// marker is still there), as stored.
func (r *Repository) stillPending(ctx context.Context, outbox []bson.Raw) (bson.A, error) {
	kept := bson.A{}
	for _, raw := range outbox {
		key, _ := raw.Lookup("key").StringValueOK()
		pending, err := r.marked(ctx, r.outboxPending, key)
		if err != nil {
			return nil, err
		}
		if pending {
			kept = append(kept, raw)
		}
	}
	return kept, nil
}
