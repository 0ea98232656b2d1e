package indexcheck

import (
	"strings"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
)

// TestIndexRules pins down how Unserved reads a command, so that a change to
// the rule shows up here before it silently passes or fails the adapter.
func TestIndexRules(t *testing.T) {
	id := bson.NewObjectID()
	cutoff := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	find := func(filter, sort bson.D) bson.D {
		cmd := bson.D{{Key: "find", Value: "workspaces"}, {Key: "filter", Value: filter}}
		if sort != nil {
			cmd = append(cmd, bson.E{Key: "sort", Value: sort})
		}
		return append(cmd, bson.E{Key: "$db", Value: "test"})
	}
	byName := Indexes{"workspaces": {
		{{Key: "visibleTo", Value: 1}, {Key: "deletedAt", Value: 1}, {Key: "nameKey", Value: 1}, {Key: "_id", Value: 1}},
	}}
	keyset := Indexes{"workspaces": {
		{{Key: "visibleTo", Value: 1}, {Key: "deletedAt", Value: 1}, {Key: "nameKey", Value: 1}, {Key: "_id", Value: 1}, {Key: "address.state", Value: 1}},
	}}
	eventsByTime := Indexes{"events": {{{Key: "occurredAt", Value: 1}}}}
	deleteOld := bson.D{
		{Key: "delete", Value: "events"},
		{Key: "ordered", Value: true},
		{Key: "deletes", Value: bson.A{bson.D{
			{Key: "q", Value: bson.D{{Key: "occurredAt", Value: bson.D{{Key: "$lt", Value: cutoff}}}}},
			{Key: "limit", Value: 0},
		}}},
	}
	visible := bson.D{{Key: "visibleTo", Value: "a"}, {Key: "deletedAt", Value: nil}}

	tests := []struct {
		name   string
		cmd    bson.D
		ix     Indexes
		served bool
		coll   string // named in the reason when unserved
	}{
		{
			name:   "find by _id needs no declared index",
			cmd:    find(bson.D{{Key: "_id", Value: id}}, nil),
			served: true,
		},
		{
			name:   "_id $in with another field",
			cmd:    find(bson.D{{Key: "_id", Value: bson.D{{Key: "$in", Value: bson.A{id}}}}, {Key: "owner", Value: "a"}}, nil),
			served: true,
		},
		{
			name: "empty filter",
			cmd:  find(bson.D{}, nil),
			ix:   byName,
			coll: "workspaces",
		},
		{
			name:   "equality and sort in index order",
			cmd:    find(visible, bson.D{{Key: "nameKey", Value: 1}, {Key: "_id", Value: 1}}),
			ix:     byName,
			served: true,
		},
		{
			name: "sort keys in the wrong order",
			cmd:  find(visible, bson.D{{Key: "_id", Value: 1}, {Key: "nameKey", Value: 1}}),
			ix:   byName,
			coll: "workspaces",
		},
		{
			name: "sort on a field the index lacks",
			cmd:  find(visible, bson.D{{Key: "name", Value: 1}}),
			ix:   byName,
			coll: "workspaces",
		},
		{
			name: "range on a field the index lacks",
			cmd:  find(append(bson.D{{Key: "size", Value: bson.D{{Key: "$gt", Value: 3}}}}, visible...), nil),
			ix:   byName,
			coll: "workspaces",
		},
		{
			name:   "range on a field after the sort keys",
			cmd:    find(append(bson.D{{Key: "address.state", Value: bson.D{{Key: "$in", Value: bson.A{"CA", "NY"}}}}}, visible...), bson.D{{Key: "nameKey", Value: 1}, {Key: "_id", Value: 1}}),
			ix:     keyset,
			served: true,
		},
		{
			name:   "$regex on a sort key",
			cmd:    find(append(bson.D{{Key: "nameKey", Value: bson.D{{Key: "$regex", Value: "^ab"}}}}, visible...), bson.D{{Key: "nameKey", Value: 1}}),
			ix:     byName,
			served: true,
		},
		{
			name: "$or with an index per branch",
			cmd: find(bson.D{{Key: "$or", Value: bson.A{
				bson.D{{Key: "owner", Value: "a"}},
				bson.D{{Key: "visibleTo", Value: "a"}, {Key: "deletedAt", Value: nil}},
			}}}, nil),
			ix: Indexes{"workspaces": {
				{{Key: "owner", Value: 1}},
				{{Key: "visibleTo", Value: 1}, {Key: "deletedAt", Value: 1}},
			}},
			served: true,
		},
		{
			name: "$or with a branch no index serves",
			cmd: find(bson.D{{Key: "$or", Value: bson.A{
				bson.D{{Key: "owner", Value: "a"}},
				bson.D{{Key: "editor", Value: "a"}},
			}}}, nil),
			ix:   Indexes{"workspaces": {{{Key: "owner", Value: 1}}}},
			coll: "workspaces",
		},
		{
			name: "keyset page condition",
			cmd: find(bson.D{
				{Key: "visibleTo", Value: "a"},
				{Key: "deletedAt", Value: nil},
				{Key: "nameKey", Value: bson.D{{Key: "$gte", Value: "k"}}},
				{Key: "$or", Value: bson.A{
					bson.D{{Key: "nameKey", Value: bson.D{{Key: "$gt", Value: "k"}}}},
					bson.D{{Key: "_id", Value: bson.D{{Key: "$gt", Value: id}}}},
				}},
			}, bson.D{{Key: "nameKey", Value: 1}, {Key: "_id", Value: 1}}),
			ix:     keyset,
			served: true,
		},
		{
			name: "update by _id and revision",
			cmd: bson.D{
				{Key: "update", Value: "workspaces"},
				{Key: "updates", Value: bson.A{bson.D{
					{Key: "q", Value: bson.D{{Key: "_id", Value: id}, {Key: "revision", Value: 3}}},
					{Key: "u", Value: bson.D{{Key: "$set", Value: bson.D{{Key: "revision", Value: 4}}}}},
				}}},
			},
			served: true,
		},
		{
			name:   "delete by time range with an index",
			cmd:    deleteOld,
			ix:     eventsByTime,
			served: true,
		},
		{
			name: "delete by time range without an index",
			cmd:  deleteOld,
			ix:   Indexes{"workspaces": byName["workspaces"]},
			coll: "events",
		},
		{
			name: "aggregate starting with $group",
			cmd: bson.D{
				{Key: "aggregate", Value: "events"},
				{Key: "pipeline", Value: bson.A{bson.D{{Key: "$group", Value: bson.D{{Key: "_id", Value: "$kind"}}}}}},
				{Key: "cursor", Value: bson.D{}},
			},
			ix:   eventsByTime,
			coll: "events",
		},
		{
			name: "insert is not checked",
			cmd: bson.D{
				{Key: "insert", Value: "events"},
				{Key: "documents", Value: bson.A{bson.D{{Key: "_id", Value: id}}}},
			},
			served: true,
		},
		{
			name: "findAndModify with query and sort",
			cmd: bson.D{
				{Key: "findAndModify", Value: "workspaces"},
				{Key: "query", Value: visible},
				{Key: "sort", Value: bson.D{{Key: "nameKey", Value: 1}}},
				{Key: "update", Value: bson.D{{Key: "$set", Value: bson.D{{Key: "claimed", Value: true}}}}},
			},
			ix:     byName,
			served: true,
		},
		{
			name: "findAndModify sorted off the index",
			cmd: bson.D{
				{Key: "findAndModify", Value: "workspaces"},
				{Key: "query", Value: visible},
				{Key: "sort", Value: bson.D{{Key: "createdAt", Value: -1}}},
				{Key: "remove", Value: true},
			},
			ix:   byName,
			coll: "workspaces",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			raw, err := bson.Marshal(tc.cmd)
			if err != nil {
				t.Fatal(err)
			}
			why := Unserved(raw, tc.ix)
			switch {
			case tc.served && why != "":
				t.Errorf("want served, got %q", why)
			case !tc.served && why == "":
				t.Error("want unserved, got served")
			case !tc.served && !strings.Contains(why, " on "+tc.coll+":"):
				t.Errorf("reason does not name collection %q: %q", tc.coll, why)
			}
			if why != "" {
				t.Log(why)
			}
		})
	}
}
