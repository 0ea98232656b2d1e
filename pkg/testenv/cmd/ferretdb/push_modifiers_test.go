package main

import (
	"context"
	"errors"
	"reflect"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
	"go.mongodb.org/mongo-driver/v2/x/bsonx/bsoncore"
)

// The array MongoDB makes of a $push with $position and $slice, from
// what FerretDB appended.
func TestPushModifierApply(t *testing.T) {
	n := func(v int64) *int64 { return &v }
	for _, tc := range []struct {
		name     string
		arr      []int32 // as FerretDB left it: the pushed values last
		pushed   int
		position *int64
		slice    *int64
		want     []int32
	}{
		{"first, capped", []int32{3, 2, 1, 4}, 1, n(0), n(3), []int32{4, 3, 2}},
		{"first, under the cap", []int32{1, 2}, 1, n(0), n(3), []int32{2, 1}},
		{"a new array", []int32{7, 8}, 2, n(0), n(1), []int32{7}},
		{"in the middle", []int32{1, 2, 3, 9}, 1, n(1), nil, []int32{1, 9, 2, 3}},
		{"past the end", []int32{1, 9}, 1, n(5), nil, []int32{1, 9}},
		{"from the end", []int32{1, 2, 3, 9}, 1, n(-1), nil, []int32{1, 2, 9, 3}},
		{"from before the start", []int32{1, 9}, 1, n(-5), nil, []int32{9, 1}},
		{"the last ones", []int32{1, 2, 3, 9}, 1, nil, n(-2), []int32{3, 9}},
		{"none kept", []int32{1, 9}, 1, nil, n(0), []int32{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			values := make([]bsoncore.Value, len(tc.arr))
			for i, v := range tc.arr {
				values[i] = bsoncore.Value{Type: bsoncore.TypeInt32, Data: bsoncore.AppendInt32(nil, v)}
			}
			got := []int32{}
			for _, v := range (pushModifier{values: tc.pushed, position: tc.position, slice: tc.slice}).apply(values) {
				got = append(got, v.Int32())
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("got %v, want %v", got, tc.want)
			}
		})
	}
}

// Through the front, $push's $position and $slice do what they do on
// MongoDB, in a lone update and in a bulk write's statements (which the
// driver sends as a document sequence), upserts included; a statement's
// write error keeps its index; $sort is refused rather than ignored.
func TestPushModifiers(t *testing.T) {
	s := startStandIn(t, t.TempDir(), config{})
	ctx := context.Background()
	c := connect(t, s.uri).Database("push").Collection("docs")
	newestFirst := func(v int) bson.D {
		return bson.D{{Key: "$push", Value: bson.D{{Key: "list", Value: bson.D{
			{Key: "$each", Value: bson.A{v}}, {Key: "$position", Value: 0}, {Key: "$slice", Value: 3},
		}}}}, {Key: "$max", Value: bson.D{{Key: "top", Value: v}}}}
	}
	read := func(id string) (list []int, top int) {
		t.Helper()
		var doc struct {
			List []int `bson:"list"`
			Top  int   `bson:"top"`
		}
		if err := c.FindOne(ctx, bson.D{{Key: "_id", Value: id}}).Decode(&doc); err != nil {
			t.Fatal(err)
		}
		return doc.List, doc.Top
	}
	for v := range 5 {
		if _, err := c.UpdateOne(ctx, bson.D{{Key: "_id", Value: "a"}}, newestFirst(v), options.UpdateOne().SetUpsert(true)); err != nil {
			t.Fatal(err)
		}
	}
	if list, top := read("a"); !reflect.DeepEqual(list, []int{4, 3, 2}) || top != 4 {
		t.Fatalf("a: list %v, top %d; want [4 3 2], 4", list, top)
	}

	if _, err := c.InsertOne(ctx, bson.D{{Key: "_id", Value: "taken"}, {Key: "n", Value: 1}}); err != nil {
		t.Fatal(err)
	}
	res, err := c.BulkWrite(ctx, []mongo.WriteModel{
		mongo.NewUpdateOneModel().SetFilter(bson.D{{Key: "_id", Value: "a"}}).SetUpdate(newestFirst(9)),
		mongo.NewUpdateOneModel().SetFilter(bson.D{{Key: "_id", Value: "b"}}).SetUpdate(newestFirst(9)).SetUpsert(true),
		// An upsert whose filter's _id differs from the one it sets fails.
		mongo.NewUpdateOneModel().SetFilter(bson.D{{Key: "_id", Value: "c"}}).
			SetUpdate(bson.D{{Key: "$set", Value: bson.D{{Key: "_id", Value: "taken"}}}, {Key: "$push", Value: bson.D{{Key: "list", Value: bson.D{
				{Key: "$each", Value: bson.A{1}}, {Key: "$slice", Value: 1}}}}}}).SetUpsert(true),
		mongo.NewUpdateOneModel().SetFilter(bson.D{{Key: "_id", Value: "d"}}).SetUpdate(newestFirst(9)).SetUpsert(true),
	}, options.BulkWrite().SetOrdered(false))
	var bulk mongo.BulkWriteException
	if !errors.As(err, &bulk) || len(bulk.WriteErrors) != 1 || bulk.WriteErrors[0].Index != 2 {
		t.Fatalf("the bulk write: %v, want one write error, of statement 2", err)
	}
	if res.MatchedCount != 1 || res.ModifiedCount != 1 || res.UpsertedCount != 2 || res.UpsertedIDs[1] != "b" || res.UpsertedIDs[3] != "d" {
		t.Fatalf("the bulk write's result: %+v", res)
	}
	if list, _ := read("a"); !reflect.DeepEqual(list, []int{9, 4, 3}) {
		t.Fatalf("a after the bulk write: %v", list)
	}
	if list, top := read("b"); !reflect.DeepEqual(list, []int{9}) || top != 9 {
		t.Fatalf("b, upserted: list %v, top %d", list, top)
	}

	_, err = c.UpdateOne(ctx, bson.D{{Key: "_id", Value: "a"}}, bson.D{{Key: "$push", Value: bson.D{{Key: "list", Value: bson.D{
		{Key: "$each", Value: bson.A{1}}, {Key: "$sort", Value: 1}}}}}})
	var refused mongo.ServerError
	if !errors.As(err, &refused) || !refused.HasErrorCode(codeBadValue) {
		t.Fatalf("$sort: %v, want BadValue", err)
	}
	if list, _ := read("a"); !reflect.DeepEqual(list, []int{9, 4, 3}) {
		t.Fatalf("a after a refused $sort: %v", list)
	}
}
