package mongoconn

import (
	"context"
	"fmt"
	"math"
	"slices"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
)

// Index is an index an adapter declares, beside the query it is for. Keys
// follow MongoDB's equality–sort–range rule: the fields a query matches
// exactly, then those it sorts by, then those it filters by range or
// pattern. Each adapter's tests check every query it sends against its
// declared indexes (package indexcheck).
type Index struct {
	Collection string
	Name       string
	// Keys are ascending; a query sorting every key the other way walks
	// the index backwards.
	Keys   []string
	Unique bool
	// Sparse leaves out documents without the first key: an index of the
	// few documents with work pending, not of all of them.
	Sparse bool
	// Expires makes it a TTL index of the retention EnsureIndexes is
	// given (one field only, as MongoDB's TTL indexes).
	Expires bool
}

// Model is the index as createIndexes takes it, a TTL index keeping
// documents for retention.
func (ix Index) Model(retention time.Duration) mongo.IndexModel {
	keys := make(bson.D, len(ix.Keys))
	for i, k := range ix.Keys {
		keys[i] = bson.E{Key: k, Value: 1}
	}
	opts := options.Index().SetName(ix.Name)
	if ix.Unique {
		opts.SetUnique(true)
	}
	if ix.Sparse {
		opts.SetSparse(true)
	}
	if ix.Expires {
		opts.SetExpireAfterSeconds(TTLSeconds(retention))
	}
	return mongo.IndexModel{Keys: keys, Options: opts}
}

// Declared returns the key patterns of indexes, by collection: what an
// adapter's tests check its queries against.
func Declared(indexes []Index) map[string][]bson.D {
	out := map[string][]bson.D{}
	for _, ix := range indexes {
		out[ix.Collection] = append(out[ix.Collection], ix.Model(0).Keys.(bson.D))
	}
	return out
}

// Do runs one driver operation (through a breaker, when the adapter has
// one).
type Do func(ctx context.Context, op func(context.Context) error) error

// EnsureIndexes creates c's indexes among indexes that are missing, and
// moves a TTL index to retention. It lists the indexes first: that is how
// it sees a TTL to change (collMod), where createIndexes of the same key
// with another expireAfterSeconds is refused, and a start with nothing
// missing sends no createIndexes at all.
func EnsureIndexes(ctx context.Context, do Do, c *mongo.Collection, indexes []Index, retention time.Duration) error {
	var existing []mongo.IndexSpecification
	err := do(ctx, func(ctx context.Context) (err error) {
		existing, err = c.Indexes().ListSpecifications(ctx)
		return err
	})
	if err != nil {
		return Error("list "+c.Name()+" indexes", err)
	}
	ttl := TTLSeconds(retention)
	var missing []mongo.IndexModel
	for _, ix := range indexes {
		if ix.Collection != c.Name() {
			continue
		}
		at := slices.IndexFunc(existing, func(s mongo.IndexSpecification) bool { return s.Name == ix.Name })
		switch {
		case at < 0:
			missing = append(missing, ix.Model(retention))
		case ix.Expires && (existing[at].ExpireAfterSeconds == nil || *existing[at].ExpireAfterSeconds != ttl):
			if err := setTTL(ctx, do, c, ix.Name, ttl); err != nil {
				return err
			}
		}
	}
	if len(missing) == 0 {
		return nil
	}
	err = do(ctx, func(ctx context.Context) error {
		_, err := c.Indexes().CreateMany(ctx, missing)
		return err
	})
	if err != nil {
		return Error("create "+c.Name()+" indexes", err)
	}
	return nil
}

// TTLSeconds is a retention as a TTL index takes it: whole seconds, at
// most the int32 MongoDB allows (68 years).
func TTLSeconds(retention time.Duration) int32 {
	return int32(min(retention/time.Second, math.MaxInt32))
}

// setTTL changes how long a TTL index keeps documents.
func setTTL(ctx context.Context, do Do, c *mongo.Collection, index string, seconds int32) error {
	err := do(ctx, func(ctx context.Context) error {
		return c.Database().RunCommand(ctx, bson.D{
			{Key: "collMod", Value: c.Name()},
			{Key: "index", Value: bson.D{{Key: "name", Value: index}, {Key: "expireAfterSeconds", Value: seconds}}},
		}).Err()
	})
	if err != nil {
		return Error(fmt.Sprintf("set the TTL of %s.%s", c.Name(), index), err)
	}
	return nil
}
