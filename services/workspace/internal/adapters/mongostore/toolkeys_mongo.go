package mongostore

import (
	"context"
	"crypto/rsa"
	"errors"
	"math/big"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"

	"github.com/liveproctor/workspaces/services/workspace/internal/adapters/mongoconn"
	"github.com/liveproctor/workspaces/services/workspace/internal/domain"
	ltidomain "github.com/liveproctor/workspaces/services/workspace/internal/lti/domain"
)

// ToolKeysCollection holds the tool's LTI 1.3 key set: one document, read
// and written by _id only.
const ToolKeysCollection = "lti_tool_keys"

// toolKeysID is the _id of that document.
const toolKeysID = "tool"

// toolKeysDoc is the stored key set. Private keys are sealed by the secret
// box; a dump yields only public halves.
type toolKeysDoc struct {
	ID       string       `bson:"_id"`
	Revision int64        `bson:"revision"`
	Keys     []toolKeyDoc `bson:"keys"`
}

type toolKeyDoc struct {
	KID       string     `bson:"kid"`
	N         []byte     `bson:"n"` // the modulus, big-endian
	E         int        `bson:"e"`
	Sealed    []byte     `bson:"sealed"`
	CreatedAt time.Time  `bson:"createdAt"`
	SignsFrom time.Time  `bson:"signsFrom"`
	RetiredAt *time.Time `bson:"retiredAt,omitempty"`
}

var _ ltidomain.ToolKeyStore = (*Repository)(nil)

func (r *Repository) toolKeys() *mongo.Collection {
	return r.workspaces.Database().Collection(ToolKeysCollection)
}

// ToolKeys reads the tool's key set: one find by _id.
func (r *Repository) ToolKeys(ctx context.Context) (ltidomain.ToolKeys, error) {
	var doc toolKeysDoc
	err := r.do(ctx, func(ctx context.Context) error {
		return r.toolKeys().FindOne(ctx, bson.D{{Key: "_id", Value: toolKeysID}}).Decode(&doc)
	})
	if errors.Is(err, mongo.ErrNoDocuments) {
		return ltidomain.ToolKeys{}, nil
	}
	if err != nil {
		return ltidomain.ToolKeys{}, mongoconn.Error("read the tool's keys", err)
	}
	s := ltidomain.ToolKeys{Revision: doc.Revision, Keys: make([]ltidomain.ToolKey, len(doc.Keys))}
	for i, k := range doc.Keys {
		s.Keys[i] = ltidomain.ToolKey{
			KID:       k.KID,
			Public:    &rsa.PublicKey{N: new(big.Int).SetBytes(k.N), E: k.E},
			Sealed:    k.Sealed,
			CreatedAt: k.CreatedAt,
			SignsFrom: k.SignsFrom,
		}
		if k.RetiredAt != nil {
			s.Keys[i].RetiredAt = *k.RetiredAt
		}
	}
	return s, nil
}

// SaveToolKeys writes the set when the stored revision is still
// s.Revision: the first set is an insert (a concurrent first insert fails
// on _id), every later one an updateOne on {_id, revision}.
func (r *Repository) SaveToolKeys(ctx context.Context, s ltidomain.ToolKeys) error {
	doc := toolKeysDoc{ID: toolKeysID, Revision: s.Revision + 1, Keys: make([]toolKeyDoc, len(s.Keys))}
	for i, k := range s.Keys {
		doc.Keys[i] = toolKeyDoc{KID: k.KID, N: k.Public.N.Bytes(), E: k.Public.E, Sealed: k.Sealed,
			CreatedAt: k.CreatedAt.UTC(), SignsFrom: k.SignsFrom.UTC()}
		if !k.RetiredAt.IsZero() {
			at := k.RetiredAt.UTC()
			doc.Keys[i].RetiredAt = &at
		}
	}
	var matched int64 = 1
	err := r.do(ctx, func(ctx context.Context) error {
		if s.Revision == 0 {
			_, err := r.toolKeys().InsertOne(ctx, doc)
			return err
		}
		res, err := r.toolKeys().UpdateOne(ctx,
			bson.D{{Key: "_id", Value: toolKeysID}, {Key: "revision", Value: s.Revision}},
			bson.D{{Key: "$set", Value: bson.D{{Key: "revision", Value: doc.Revision}, {Key: "keys", Value: doc.Keys}}}})
		if err == nil {
			matched = res.MatchedCount
		}
		return err
	})
	switch {
	case mongo.IsDuplicateKeyError(err), err == nil && matched == 0:
		return domain.ErrRevisionChanged
	case err != nil:
		return mongoconn.Error("save the tool's keys", err)
	}
	return nil
}
