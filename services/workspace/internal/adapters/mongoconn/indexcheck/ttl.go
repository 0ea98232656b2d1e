package indexcheck

import (
	"context"
	"testing"

	"go.mongodb.org/mongo-driver/v2/mongo"
)

// WantTTL fails t unless c's index named index is a TTL index of seconds.
func WantTTL(t testing.TB, c *mongo.Collection, index string, seconds int32) {
	t.Helper()
	specs, err := c.Indexes().ListSpecifications(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range specs {
		if s.Name == index {
			if s.ExpireAfterSeconds == nil || *s.ExpireAfterSeconds != seconds {
				t.Fatalf("%s.%s: expireAfterSeconds %v, want %d", c.Name(), index, s.ExpireAfterSeconds, seconds)
			}
			return
		}
	}
	t.Fatalf("%s has no index %s", c.Name(), index)
}
