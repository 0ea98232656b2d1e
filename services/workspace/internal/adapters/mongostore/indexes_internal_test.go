package mongostore

import (
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/liveproctor/workspaces/services/workspace/internal/adapters/mongoconn"
)

// The events' expiry index is a TTL index of the retention, in whole
// seconds.
func TestEventExpiryIsATTLIndexOfTheRetention(t *testing.T) {
	var opts options.IndexOptions
	for _, set := range declared(t, "expiry").Model(90 * 24 * time.Hour).Options.List() {
		if err := set(&opts); err != nil {
			t.Fatal(err)
		}
	}
	if got := opts.ExpireAfterSeconds; got == nil || *got != 7_776_000 {
		t.Fatalf("expireAfterSeconds = %v, want 7776000", got)
	}
}

// declared is the index the adapter declares under name.
func declared(t *testing.T, name string) mongoconn.Index {
	t.Helper()
	for _, ix := range indexes {
		if ix.Name == name {
			return ix
		}
	}
	t.Fatalf("no index named %s", name)
	return mongoconn.Index{}
}
