package mongostore

import (
	"context"
	"regexp"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/liveproctor/workspaces/services/workspace/internal/adapters/mongoconn"
	"github.com/liveproctor/workspaces/services/workspace/internal/domain"
)

// List returns one page of q in one query on the "list" index.
func (r *Repository) List(ctx context.Context, q domain.ListQuery) ([]*domain.Workspace, error) {
	opts := options.Find().
		SetSort(bson.D{{Key: "nameKey", Value: 1}, {Key: "_id", Value: 1}}).
		SetLimit(int64(max(q.Limit, 1)))
	var docs []workspaceDoc
	err := r.do(ctx, func(ctx context.Context) error {
		cur, err := r.workspaces.Find(ctx, listFilter(q), opts)
		if err != nil {
			return err
		}
		return cur.All(ctx, &docs)
	})
	if err != nil {
		return nil, mongoconn.Error("list workspaces", err)
	}
	out := make([]*domain.Workspace, len(docs))
	for i := range docs {
		out[i] = docs[i].toWorkspace()
	}
	return out, nil
}

// listFilter is domain.ListQuery.Selects as a MongoDB filter, written for
// the "list" index: the caller and deletedAt are equalities on its first
// keys; the page's start bounds nameKey, with the id breaking the tie; the
// name search is a pattern on nameKey and the states a set on address.state,
// both evaluated on the index keys.
func listFilter(q domain.ListQuery) bson.D {
	filter := bson.D{
		{Key: "visibleTo", Value: q.VisibleTo},
		{Key: "deletedAt", Value: nil},
	}
	var nameKey bson.D
	if q.After != nil {
		nameKey = append(nameKey, bson.E{Key: "$gte", Value: q.After.NameKey})
	}
	if q.NameContains != "" {
		nameKey = append(nameKey, bson.E{Key: "$regex", Value: regexp.QuoteMeta(q.NameContains)})
	}
	if len(nameKey) > 0 {
		filter = append(filter, bson.E{Key: "nameKey", Value: nameKey})
	}
	if q.After != nil {
		filter = append(filter, bson.E{Key: "$or", Value: bson.A{
			bson.D{{Key: "nameKey", Value: bson.D{{Key: "$gt", Value: q.After.NameKey}}}},
			bson.D{{Key: "_id", Value: bson.D{{Key: "$gt", Value: q.After.ID}}}},
		}})
	}
	if len(q.States) > 0 {
		filter = append(filter, bson.E{Key: "address.state", Value: bson.D{{Key: "$in", Value: q.States}}})
	}
	return filter
}
