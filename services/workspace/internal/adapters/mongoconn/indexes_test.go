package mongoconn_test

import (
	"math"
	"testing"
	"time"

	"github.com/liveproctor/workspaces/services/workspace/internal/adapters/mongoconn"
)

// A TTL is whole seconds, at most the int32 MongoDB takes.
func TestTTLSeconds(t *testing.T) {
	if got := mongoconn.TTLSeconds(90*time.Minute + 999*time.Millisecond); got != 5400 {
		t.Fatalf("TTLSeconds of 90 minutes = %d, want 5400", got)
	}
	if got := mongoconn.TTLSeconds(200 * 365 * 24 * time.Hour); got != math.MaxInt32 {
		t.Fatalf("TTLSeconds of 200 years = %d, want the int32 maximum", got)
	}
}
