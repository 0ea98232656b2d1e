package mongostore

import (
	"math"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/mongo/options"
)

// On MongoDB the events' expiry index is a TTL index of the retention; the
// stand-in, which refuses TTL indexes, gets the same keys without it.
func TestEventExpiryIsATTLIndexOnMongoDBOnly(t *testing.T) {
	expiry := declared(t, "expiry")
	ttl := func(standIn bool, retention time.Duration) *int32 {
		var opts options.IndexOptions
		for _, set := range expiry.model(standIn, retention).Options.List() {
			if err := set(&opts); err != nil {
				t.Fatal(err)
			}
		}
		return opts.ExpireAfterSeconds
	}
	if got := ttl(false, 90*24*time.Hour); got == nil || *got != 7_776_000 {
		t.Fatalf("expireAfterSeconds on MongoDB = %v, want 7776000", got)
	}
	if got := ttl(true, 90*24*time.Hour); got != nil {
		t.Fatalf("expireAfterSeconds on the stand-in = %d, want none", *got)
	}
	if got := ttlSeconds(200 * 365 * 24 * time.Hour); got != math.MaxInt32 {
		t.Fatalf("ttlSeconds of 200 years = %d, want the int32 maximum", got)
	}
}

// declared is the index the adapter declares under name.
func declared(t *testing.T, name string) indexSpec {
	t.Helper()
	for _, ix := range indexes {
		if ix.name == name {
			return ix
		}
	}
	t.Fatalf("no index named %s", name)
	return indexSpec{}
}
