package mongostore

import (
	"context"
	"errors"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/liveproctor/workspaces/services/workspace/internal/app"
	"github.com/liveproctor/workspaces/services/workspace/internal/domain"
)

// The audit trail. A change to a workspace stores its events in the
// workspace document's outbox array by the same single-document write
// (Create, Update); PublishOutbox then copies them into the events
// collection, whose _id is the change key (a second copy is a duplicate key,
// ignored), and pulls them out of the outbox. See docs/events.md.

// eventIndexes are the events collection's indexes: the public id (unique:
// lists page by it), and the two ways lists select, each ordered by id.
func eventIndexes() []namedIndex {
	byID := index("id", "id")
	byID.model.Options.SetUnique(true)
	return []namedIndex{
		byID,
		index("workspace_id", "workspaceId", "id"),
		index("managers_id", "managers", "id"),
	}
}

// PublishOutbox publishes the events in workspace id's outbox: each is
// inserted into the events collection with a public id from newID, made
// just before its insert, then the published ones leave the outbox. An
// event published before (by another request or the relay) is left as it
// was. It answers nil when the workspace does not exist or has nothing to
// publish.
func (r *Repository) PublishOutbox(ctx context.Context, id string, newID func() string) error {
	// One read serves the outbox and the list entry below.
	var raw bson.Raw
	err := r.do(ctx, func(ctx context.Context) error {
		var err error
		raw, err = r.workspaces.FindOne(ctx, bson.D{{Key: "_id", Value: id}},
			options.FindOne().SetProjection(bson.D{{Key: "keys", Value: 0}})).Raw()
		return err
	})
	if errors.Is(err, mongo.ErrNoDocuments) {
		return nil
	}
	if err != nil {
		return storeError("read outbox", err)
	}
	var doc outboxDoc
	if err := bson.Unmarshal(raw, &doc); err != nil {
		return storeError("decode outbox", err)
	}
	// Entries whose marker is gone are published already; the next Update
	// drops them.
	pending, err := r.stillPending(ctx, doc.Outbox)
	if err != nil {
		return err
	}
	var keys []string
	for _, p := range pending {
		var e eventDoc
		if err := bson.Unmarshal(p.(bson.Raw), &e); err != nil {
			return storeError("decode outbox", err)
		}
		err = r.do(ctx, func(ctx context.Context) error {
			_, err := r.events.InsertOne(ctx, publishedEventDoc{Key: e.Key, ID: newID(), Event: e})
			return err
		})
		if err != nil && !mongo.IsDuplicateKeyError(err) {
			return storeError("publish event", err)
		}
		keys = append(keys, e.Key)
	}
	if len(keys) == 0 {
		return nil
	}
	// The list entry follows the workspace before the events count as
	// published, so a failed entry write is retried by the relay.
	var ws workspaceDoc
	if err := bson.Unmarshal(raw, &ws); err != nil {
		return storeError("decode workspace", err)
	}
	if err := r.resyncEntry(ctx, &ws); err != nil {
		return err
	}
	// Removing the markers is what makes the events published. The
	// workspace document is not written here: on the embedded store an
	// update is a read then a write, and a write here could undo a
	// concurrent Update (which holds the revision's claim). Update drops
	// published entries from the outbox instead.
	return r.unmark(ctx, r.outboxPending, keys...)
}

// AppendEvent stores an event that rides on no workspace write straight
// into the audit trail, with a public id from newID (also its key).
func (r *Repository) AppendEvent(ctx context.Context, e domain.Event, newID func() string) error {
	doc := fromEvents([]domain.Event{e})[0]
	id := newID()
	if doc.Key == "" {
		doc.Key = id
	}
	err := r.do(ctx, func(ctx context.Context) error {
		_, err := r.events.InsertOne(ctx, publishedEventDoc{Key: doc.Key, ID: id, Event: doc})
		return err
	})
	if err != nil && !mongo.IsDuplicateKeyError(err) {
		return storeError("append event", err)
	}
	return nil
}

// ListEvents returns the events q selects, in id order.
func (r *Repository) ListEvents(ctx context.Context, q domain.EventQuery) ([]domain.Event, error) {
	filter := bson.A{}
	if q.IncludeManaged {
		filter = append(filter, bson.D{{Key: "$or", Value: bson.A{
			bson.D{{Key: "workspaceId", Value: q.WorkspaceID}},
			bson.D{{Key: "managers", Value: q.WorkspaceID}},
		}}})
	} else {
		filter = append(filter, bson.D{{Key: "workspaceId", Value: q.WorkspaceID}})
	}
	if len(q.Types) > 0 {
		types := make(bson.A, len(q.Types))
		for i, t := range q.Types {
			types[i] = string(t)
		}
		filter = append(filter, bson.D{{Key: "type", Value: bson.D{{Key: "$in", Value: types}}}})
	}
	idRange := bson.D{{Key: "$gt", Value: q.After}}
	if q.Before != "" {
		idRange = append(idRange, bson.E{Key: "$lt", Value: q.Before})
	}
	filter = append(filter, bson.D{{Key: "id", Value: idRange}})
	opts := options.Find().SetSort(bson.D{{Key: "id", Value: 1}}).SetLimit(int64(max(q.Limit, 1)))
	var docs []publishedEventDoc
	err := r.do(ctx, func(ctx context.Context) error {
		cur, err := r.events.Find(ctx, bson.D{{Key: "$and", Value: filter}}, opts)
		if err != nil {
			return err
		}
		return cur.All(ctx, &docs)
	})
	if err != nil {
		return nil, storeError("list events", err)
	}
	out := make([]domain.Event, len(docs))
	for i := range docs {
		out[i] = docs[i].toEvent()
	}
	return out, nil
}

// DeleteEventsBefore removes the events whose id sorts before beforeID (an
// EventIDFloor): retention. It returns how many it removed.
func (r *Repository) DeleteEventsBefore(ctx context.Context, beforeID string) (int64, error) {
	var res *mongo.DeleteResult
	err := r.do(ctx, func(ctx context.Context) (err error) {
		res, err = r.events.DeleteMany(ctx, bson.D{{Key: "id", Value: bson.D{{Key: "$lt", Value: beforeID}}}})
		return err
	})
	if err != nil {
		return 0, storeError("delete old events", err)
	}
	return res.DeletedCount, nil
}

var _ app.EventLog = (*Repository)(nil)
