package scorestore

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"

	"github.com/liveproctor/workspaces/services/workspace/internal/adapters/mongoconn"
	ltiapp "github.com/liveproctor/workspaces/services/workspace/internal/lti/app"
)

// LineItems are the line items found or made for resource links
// (lti_line_items), one document per resource link under the app's key:
// the right to find or make one is the document's insert (atomic on its
// unique _id), or the take-over of a right whose holder let it
// lapse without recording a line item.
type LineItems struct {
	c  *mongo.Collection
	do mongoconn.Do
}

var _ ltiapp.LineItemClaims = (*LineItems)(nil)

// LineItems returns the line items' claims, on the store's database
// (Prepare makes their indexes too).
func (s *Store) LineItems() *LineItems { return &LineItems{c: s.lineItems, do: s.do} }

// lineItemDoc is a resource link's line item, or the claim to find or
// make it.
type lineItemDoc struct {
	ID         string    `bson:"_id"`
	URL        string    `bson:"url,omitempty"`
	ClaimOwner string    `bson:"claimOwner"`
	ClaimToken string    `bson:"claimToken"`
	ClaimUntil time.Time `bson:"claimUntil"`
	CreatedAt  time.Time `bson:"createdAt"`
}

// Claim returns key's line item when one is recorded; else the right to
// find or make it until until, when no one else holds it.
func (l *LineItems) Claim(ctx context.Context, key, owner string, now, until time.Time) (string, string, error) {
	b := make([]byte, 16)
	_, _ = rand.Read(b) // crypto/rand.Read never fails
	token := hex.EncodeToString(b)
	err := l.do(ctx, func(ctx context.Context) error {
		_, err := l.c.InsertOne(ctx, lineItemDoc{ID: key, ClaimOwner: owner, ClaimToken: token, ClaimUntil: until.UTC(), CreatedAt: now.UTC()})
		return err
	})
	if err == nil {
		return "", token, nil
	}
	if !mongo.IsDuplicateKeyError(err) {
		return "", "", mongoconn.Error("claim an LTI line item", err)
	}
	var d lineItemDoc
	err = l.do(ctx, func(ctx context.Context) error {
		return l.c.FindOneAndUpdate(ctx,
			bson.D{{Key: "_id", Value: key}, {Key: "url", Value: nil}, {Key: "claimUntil", Value: bson.D{{Key: "$lte", Value: now.UTC()}}}},
			bson.D{{Key: "$set", Value: bson.D{
				{Key: "claimOwner", Value: owner}, {Key: "claimToken", Value: token}, {Key: "claimUntil", Value: until.UTC()},
			}}}).Decode(&d)
	})
	if err == nil {
		return "", token, nil
	}
	if !errors.Is(err, mongo.ErrNoDocuments) {
		return "", "", mongoconn.Error("claim an LTI line item", err)
	}
	err = l.do(ctx, func(ctx context.Context) error {
		return l.c.FindOne(ctx, bson.D{{Key: "_id", Value: key}}).Decode(&d)
	})
	switch {
	case errors.Is(err, mongo.ErrNoDocuments):
		return "", "", nil // removed meanwhile (retention): the next turn claims it
	case err != nil:
		return "", "", mongoconn.Error("read an LTI line item", err)
	}
	return d.URL, "", nil
}

// Record keeps lineItem under key, if token's claim holds still.
func (l *LineItems) Record(ctx context.Context, key, token, lineItem string) error {
	err := l.do(ctx, func(ctx context.Context) error {
		_, err := l.c.UpdateOne(ctx, bson.D{{Key: "_id", Value: key}, {Key: "claimToken", Value: token}},
			bson.D{{Key: "$set", Value: bson.D{{Key: "url", Value: lineItem}}}})
		return err
	})
	if err != nil {
		return mongoconn.Error("record an LTI line item", err)
	}
	return nil
}

// Release ends token's claim on key, if it holds still and recorded
// nothing.
func (l *LineItems) Release(ctx context.Context, key, token string) error {
	err := l.do(ctx, func(ctx context.Context) error {
		_, err := l.c.UpdateOne(ctx, bson.D{{Key: "_id", Value: key}, {Key: "claimToken", Value: token}, {Key: "url", Value: nil}},
			bson.D{{Key: "$set", Value: bson.D{{Key: "claimUntil", Value: time.Unix(0, 0).UTC()}}}})
		return err
	})
	if err != nil {
		return mongoconn.Error("release an LTI line item's claim", err)
	}
	return nil
}
