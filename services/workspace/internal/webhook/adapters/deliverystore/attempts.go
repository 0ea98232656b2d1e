package deliverystore

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/liveproctor/workspaces/pkg/fault"
	"github.com/liveproctor/workspaces/services/workspace/internal/adapters/mongoconn"
	webhookapp "github.com/liveproctor/workspaces/services/workspace/internal/webhook/app"
)

// attemptDoc is an attempt as stored; the TTL index on attemptedAt
// removes it after the retention.
type attemptDoc struct {
	ID          bson.ObjectID `bson:"_id"`
	EndpointID  string        `bson:"endpointId"`
	WorkspaceID string        `bson:"workspaceId"`
	EventID     string        `bson:"eventId"`
	AttemptedAt time.Time     `bson:"attemptedAt"`
	Status      int           `bson:"status"`
	DurationMs  int64         `bson:"durationMs"`
	Response    string        `bson:"response"`
	Error       string        `bson:"error,omitempty"`
}

// Record stores an attempt made for c.
func (s *Store) Record(ctx context.Context, c webhookapp.Cursor, a webhookapp.Attempt) error {
	doc := attemptDoc{
		ID: bson.NewObjectID(), EndpointID: c.EndpointID, WorkspaceID: c.WorkspaceID, EventID: a.EventID,
		AttemptedAt: a.AttemptedAt.UTC(), Status: a.Status, DurationMs: a.DurationMs, Response: a.Response, Error: a.Error,
	}
	err := s.do(ctx, func(ctx context.Context) error {
		_, err := s.attempts.InsertOne(ctx, doc)
		return err
	})
	if err != nil {
		return mongoconn.Error("record a webhook attempt", err)
	}
	return nil
}

// Attempts returns a page of the endpoint's attempts, newest first, on
// its index: one find of a page and one more attempt, which tells whether
// a next page exists.
func (s *Store) Attempts(ctx context.Context, endpointID, pageToken string, pageSize int) ([]webhookapp.Attempt, string, error) {
	pageSize = max(pageSize, 1)
	filter := bson.D{{Key: "endpointId", Value: endpointID}}
	if pageToken != "" {
		at, id, err := decodePageToken(pageToken)
		if err != nil {
			return nil, "", err
		}
		filter = append(filter,
			bson.E{Key: "attemptedAt", Value: bson.D{{Key: "$lte", Value: at}}},
			bson.E{Key: "$or", Value: bson.A{
				bson.D{{Key: "attemptedAt", Value: bson.D{{Key: "$lt", Value: at}}}},
				bson.D{{Key: "_id", Value: bson.D{{Key: "$lt", Value: id}}}},
			}})
	}
	opts := options.Find().
		SetSort(bson.D{{Key: "attemptedAt", Value: -1}, {Key: "_id", Value: -1}}).
		SetLimit(int64(pageSize) + 1)
	var docs []attemptDoc
	err := s.do(ctx, func(ctx context.Context) error {
		cur, err := s.attempts.Find(ctx, filter, opts)
		if err != nil {
			return err
		}
		return cur.All(ctx, &docs)
	})
	if err != nil {
		return nil, "", mongoconn.Error("list webhook attempts", err)
	}
	next := ""
	if len(docs) > pageSize {
		docs = docs[:pageSize]
		last := docs[pageSize-1]
		next = encodePageToken(last.AttemptedAt, last.ID)
	}
	out := make([]webhookapp.Attempt, len(docs))
	for i, d := range docs {
		out[i] = webhookapp.Attempt{
			EventID: d.EventID, AttemptedAt: d.AttemptedAt.UTC(), Status: d.Status, DurationMs: d.DurationMs,
			Response: d.Response, Error: d.Error,
		}
	}
	return out, next, nil
}

// pageToken is where a page of attempts ended: the last one's time (Unix
// milliseconds, as stored) and id.
type pageToken struct {
	At int64  `json:"t"`
	ID string `json:"i"`
}

var errBadPageToken = fault.InvalidField("pageToken", "is not a token from this list: pass nextPageToken unchanged")

func encodePageToken(at time.Time, id bson.ObjectID) string {
	b, _ := json.Marshal(pageToken{At: at.UnixMilli(), ID: id.Hex()})
	return base64.RawURLEncoding.EncodeToString(b)
}

func decodePageToken(s string) (time.Time, bson.ObjectID, error) {
	if len(s) > 128 {
		return time.Time{}, bson.ObjectID{}, errBadPageToken
	}
	b, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil {
		return time.Time{}, bson.ObjectID{}, errBadPageToken
	}
	var t pageToken
	if err := json.Unmarshal(b, &t); err != nil {
		return time.Time{}, bson.ObjectID{}, errBadPageToken
	}
	id, err := bson.ObjectIDFromHex(t.ID)
	if err != nil {
		return time.Time{}, bson.ObjectID{}, errBadPageToken
	}
	return time.UnixMilli(t.At).UTC(), id, nil
}
