package mongostore

import (
	"context"
	"errors"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/liveproctor/workspaces/services/workspace/internal/adapters/mongoconn"
	"github.com/liveproctor/workspaces/services/workspace/internal/app"
	"github.com/liveproctor/workspaces/services/workspace/internal/domain"
)

// The audit trail. A change to a workspace stores its events in the
// workspace document's outbox by the same single-document write (Create,
// Update), which also sets pendingSince when the outbox was empty.
// PublishOutbox then copies them into the events collection, whose _id is
// the change key (a second copy is a duplicate key, ignored), and empties
// the outbox if no change added to it meanwhile. See docs/events.md.

// PublishOutbox publishes the events in workspace id's outbox: one read of
// the outbox, one insert of its events, each with a public id from newID
// made just before the insert, and one write that empties the outbox while
// the workspace is still at the revision read. When a change came in
// between, only the events published leave the outbox: the outbox is not
// empty, and whoever publishes that change (its request, or the relay)
// empties it. It answers nil when the workspace does not exist or has
// nothing to publish.
func (r *Repository) PublishOutbox(ctx context.Context, id string, newID func() string) error {
	var doc struct {
		Revision     int64      `bson:"revision"`
		Outbox       []eventDoc `bson:"outbox"`
		PendingSince *time.Time `bson:"pendingSince"`
	}
	err := r.do(ctx, func(ctx context.Context) error {
		return r.workspaces.FindOne(ctx, bson.D{{Key: "_id", Value: id}},
			options.FindOne().SetProjection(bson.D{{Key: "revision", Value: 1}, {Key: "outbox", Value: 1}, {Key: "pendingSince", Value: 1}})).Decode(&doc)
	})
	if errors.Is(err, mongo.ErrNoDocuments) {
		return nil
	}
	if err != nil {
		return mongoconn.Error("read outbox", err)
	}
	if len(doc.Outbox) == 0 && doc.PendingSince == nil {
		return nil
	}
	keys := make([]string, len(doc.Outbox))
	if len(doc.Outbox) > 0 {
		published := make([]any, len(doc.Outbox))
		for i, e := range doc.Outbox {
			keys[i] = e.Key
			published[i] = publishedEventDoc{Key: e.Key, ID: newID(), Event: e}
		}
		err = r.do(ctx, func(ctx context.Context) error {
			_, err := r.events.InsertMany(ctx, published, options.InsertMany().SetOrdered(false))
			return err
		})
		if err != nil && !onlyDuplicates(err) {
			return mongoconn.Error("publish events", err)
		}
	}
	res, err := r.updateWorkspace(ctx, id, bson.D{{Key: "revision", Value: doc.Revision}},
		bson.D{{Key: "$set", Value: bson.D{{Key: "outbox", Value: bson.A{}}}}, {Key: "$unset", Value: bson.D{{Key: "pendingSince", Value: ""}}}})
	if err == nil && res.MatchedCount == 0 && len(keys) > 0 {
		_, err = r.updateWorkspace(ctx, id, nil,
			bson.D{{Key: "$pull", Value: bson.D{{Key: "outbox", Value: bson.D{{Key: "key", Value: bson.D{{Key: "$in", Value: keys}}}}}}}})
	}
	if err != nil {
		return mongoconn.Error("clear outbox", err)
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

// WorkspacesWithOutbox returns up to limit workspaces holding an event that
// occurred before, the longest waiting first, on the sparse pendingSince
// index.
func (r *Repository) WorkspacesWithOutbox(ctx context.Context, before time.Time, limit int) ([]string, error) {
	ids, err := r.workspaceIDs(ctx, "pendingSince", bson.D{{Key: "$lt", Value: before.UTC()}}, limit)
	if err != nil {
		return nil, mongoconn.Error("find outboxes", err)
	}
	return ids, nil
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
		return mongoconn.Error("append event", err)
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
		return nil, mongoconn.Error("list events", err)
	}
	out := make([]domain.Event, len(docs))
	for i := range docs {
		out[i] = docs[i].toEvent()
	}
	return out, nil
}

// Event returns the event whose public id is id, on the unique id index.
func (r *Repository) Event(ctx context.Context, id string) (domain.Event, error) {
	var doc publishedEventDoc
	err := r.do(ctx, func(ctx context.Context) error {
		return r.events.FindOne(ctx, bson.D{{Key: "id", Value: id}}).Decode(&doc)
	})
	if errors.Is(err, mongo.ErrNoDocuments) {
		return domain.Event{}, domain.ErrNotFound
	}
	if err != nil {
		return domain.Event{}, mongoconn.Error("read event", err)
	}
	return doc.toEvent(), nil
}

var _ app.EventLog = (*Repository)(nil)
