package mongostore

import (
	"math"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/mongo/options"
)

// The events' expiry index is a TTL index of the retention, in whole
// seconds, at most the int32 MongoDB takes.
func TestEventExpiryIsATTLIndexOfTheRetention(t *testing.T) {
	var opts options.IndexOptions
	for _, set := range declared(t, "expiry").model(90 * 24 * time.Hour).Options.List() {
		if err := set(&opts); err != nil {
			t.Fatal(err)
		}
	}
	if got := opts.ExpireAfterSeconds; got == nil || *got != 7_776_000 {
		t.Fatalf("expireAfterSeconds = %v, want 7776000", got)
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
