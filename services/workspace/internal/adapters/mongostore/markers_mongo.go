package mongostore

import (
	"context"
	"errors"
	"slices"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
)

// Markers: what the background work (the event relay, the key sweeper)
// must visit, kept in small collections of their own so that finding it
// never scans the workspaces. A query on anything but _id equality reads
// every document on the embedded store (about 0.5 ms per workspace
// document: 25 s at 50,000, every relay interval); a marker costs one
// insert and one delete by _id.
//
//   - outbox_pending: one marker per unpublished event (_id: the event's
//     change key), inserted before the write that puts the event into a
//     workspace's outbox and deleted once the event is published. A
//     marker whose write never happened is dropped by the relay once it
//     is older than markerSettle and its event is not in the outbox.
//   - key_expiries: one marker per workspace (_id: its id) that holds, or
//     held, a key pair with an expiresAt, inserted before the write that
//     sets it; the sweeper drops it once the workspace holds none.
//
// An outbox entry is unpublished exactly while its marker exists: the
// publish inserts the event, then deletes the marker, and never writes the
// workspace document; the next Update drops the entries without a marker.
// Markers came with expiring key pairs and the outbox, so no store holds
// either without them.
const (
	OutboxPendingCollection = "outbox_pending"
	KeyExpiriesCollection   = "key_expiries"
)

// markerSettle is how old a marker must be before it may be dropped for
// pointing at nothing: longer than any write it announces can take (the
// services' store timeouts are seconds).
const markerSettle = 10 * time.Minute

// markerDoc announces work on a workspace.
type markerDoc struct {
	ID          string    `bson:"_id"`
	WorkspaceID string    `bson:"workspaceId"`
	CreatedAt   time.Time `bson:"createdAt"`
}

// mark inserts markers into c, leaving those that exist as they are.
func (r *Repository) mark(ctx context.Context, c *mongo.Collection, docs []markerDoc) error {
	if len(docs) == 0 {
		return nil
	}
	batch := make([]any, len(docs))
	for i, d := range docs {
		batch[i] = d
	}
	err := r.do(ctx, func(ctx context.Context) error {
		_, err := c.InsertMany(ctx, batch, options.InsertMany().SetOrdered(false))
		return err
	})
	if err != nil && !onlyDuplicates(err) {
		return storeError("mark in "+c.Name(), err)
	}
	return nil
}

// onlyDuplicates reports whether every write error of a bulk insert was a
// duplicate key.
func onlyDuplicates(err error) bool {
	var bulk mongo.BulkWriteException
	if !errors.As(err, &bulk) || bulk.WriteConcernError != nil || len(bulk.WriteErrors) == 0 {
		return mongo.IsDuplicateKeyError(err)
	}
	for _, we := range bulk.WriteErrors {
		if !mongo.IsDuplicateKeyError(we) {
			return false
		}
	}
	return true
}

// markOutbox announces the events about to be written into workspace id's
// outbox.
func (r *Repository) markOutbox(ctx context.Context, id string, events []eventDoc) error {
	docs := make([]markerDoc, len(events))
	now := r.now().UTC()
	for i, e := range events {
		docs[i] = markerDoc{ID: e.Key, WorkspaceID: id, CreatedAt: now}
	}
	return r.mark(ctx, r.outboxPending, docs)
}

// markKeyExpiry announces that workspace d is about to hold a key pair
// with an expiresAt, when it is. The marker's time is renewed, so the
// sweeper, which drops only markers it read as stale, keeps it.
func (r *Repository) markKeyExpiry(ctx context.Context, d *workspaceDoc) error {
	if !slices.ContainsFunc(d.Keys, func(k keyDoc) bool { return k.ExpiresAt != nil }) {
		return nil
	}
	err := r.do(ctx, func(ctx context.Context) error {
		_, err := r.keyExpiries.UpdateOne(ctx, bson.D{{Key: "_id", Value: d.ID}},
			bson.D{{Key: "$set", Value: bson.D{{Key: "workspaceId", Value: d.ID}, {Key: "createdAt", Value: r.now().UTC()}}}},
			options.UpdateOne().SetUpsert(true))
		return err
	})
	if err != nil && !mongo.IsDuplicateKeyError(err) {
		return storeError("mark a key expiry", err)
	}
	return nil
}

// dropStale deletes marker m when it is still as it was read.
func (r *Repository) dropStale(ctx context.Context, c *mongo.Collection, m markerDoc) error {
	err := r.do(ctx, func(ctx context.Context) error {
		_, err := c.DeleteOne(ctx, bson.D{{Key: "_id", Value: m.ID}, {Key: "createdAt", Value: m.CreatedAt}})
		return err
	})
	if err != nil {
		return storeError("drop a marker in "+c.Name(), err)
	}
	return nil
}

// WorkspacesWithOutbox returns the ids of up to limit workspaces whose
// outbox may hold events, from the outbox markers (see above).
func (r *Repository) WorkspacesWithOutbox(ctx context.Context, limit int) ([]string, error) {
	ms, err := r.markers(ctx, r.outboxPending, markerReads)
	if err != nil {
		return nil, err
	}
	var ids []string
	for _, m := range ms {
		if len(ids) == limit {
			break
		}
		if slices.Contains(ids, m.WorkspaceID) {
			continue
		}
		if r.stale(m) {
			// Either its event is still in the outbox (a publish failed for
			// a long time) or it points at nothing (published, or the write
			// never happened).
			var doc outboxDoc
			err := r.do(ctx, func(ctx context.Context) error {
				return r.workspaces.FindOne(ctx, bson.D{{Key: "_id", Value: m.WorkspaceID}},
					options.FindOne().SetProjection(bson.D{{Key: "outbox", Value: 1}})).Decode(&doc)
			})
			if err != nil && !errors.Is(err, mongo.ErrNoDocuments) {
				return nil, storeError("read outbox", err)
			}
			if !slices.ContainsFunc(doc.Outbox, func(raw bson.Raw) bool { return raw.Lookup("key").StringValue() == m.ID }) {
				if err := r.dropStale(ctx, r.outboxPending, m); err != nil {
					return nil, err
				}
				continue
			}
		}
		ids = append(ids, m.WorkspaceID)
	}
	return ids, nil
}

// markerReads bounds the markers one call reads.
const markerReads = 1000

// WithExpiredKeys finds workspaces with a key pair whose expiresAt has
// passed, from the key expiry markers (see above).
func (r *Repository) WithExpiredKeys(ctx context.Context, now time.Time, limit int) ([]string, error) {
	ms, err := r.markers(ctx, r.keyExpiries, markerReads)
	if err != nil {
		return nil, err
	}
	var ids []string
	for _, m := range ms {
		if len(ids) == limit {
			break
		}
		var doc struct {
			Keys []keyDoc `bson:"keys"`
		}
		err := r.do(ctx, func(ctx context.Context) error {
			return r.workspaces.FindOne(ctx, bson.D{{Key: "_id", Value: m.WorkspaceID}},
				options.FindOne().SetProjection(bson.D{{Key: "keys", Value: 1}})).Decode(&doc)
		})
		if err != nil && !errors.Is(err, mongo.ErrNoDocuments) {
			return nil, storeError("read key pairs", err)
		}
		switch {
		case slices.ContainsFunc(doc.Keys, func(k keyDoc) bool { return k.ExpiresAt != nil && !k.ExpiresAt.After(now) }):
			ids = append(ids, m.WorkspaceID)
		case r.stale(m) && !slices.ContainsFunc(doc.Keys, func(k keyDoc) bool { return k.ExpiresAt != nil }):
			if err := r.dropStale(ctx, r.keyExpiries, m); err != nil {
				return nil, err
			}
		}
	}
	slices.Sort(ids)
	return ids, nil
}

// marked reports whether c holds the marker id.
func (r *Repository) marked(ctx context.Context, c *mongo.Collection, id string) (bool, error) {
	err := r.do(ctx, func(ctx context.Context) error {
		return c.FindOne(ctx, bson.D{{Key: "_id", Value: id}}, options.FindOne().SetProjection(bson.D{{Key: "_id", Value: 1}})).Err()
	})
	if errors.Is(err, mongo.ErrNoDocuments) {
		return false, nil
	}
	if err != nil {
		return false, storeError("read a marker in "+c.Name(), err)
	}
	return true, nil
}

// unmark deletes the markers with ids from c, one by _id each.
func (r *Repository) unmark(ctx context.Context, c *mongo.Collection, ids ...string) error {
	for _, id := range ids {
		err := r.do(ctx, func(ctx context.Context) error {
			_, err := c.DeleteOne(ctx, bson.D{{Key: "_id", Value: id}})
			return err
		})
		if err != nil {
			return storeError("unmark in "+c.Name(), err)
		}
	}
	return nil
}

// markers reads up to limit markers of c.
func (r *Repository) markers(ctx context.Context, c *mongo.Collection, limit int) ([]markerDoc, error) {
	var docs []markerDoc
	err := r.do(ctx, func(ctx context.Context) error {
		cur, err := c.Find(ctx, bson.D{}, options.Find().SetLimit(int64(max(limit, 1))))
		if err != nil {
			return err
		}
		return cur.All(ctx, &docs)
	})
	if err != nil {
		return nil, storeError("read "+c.Name(), err)
	}
	return docs, nil
}

// stale reports whether marker m is old enough to be dropped when it
// points at nothing.
func (r *Repository) stale(m markerDoc) bool {
	return m.CreatedAt.Before(r.now().Add(-markerSettle))
}
