package lifecycle

import (
	"os"
	"runtime/debug"
	"testing"
)

func TestTuneGCRaisesTheTargetUnlessGOGCIsSet(t *testing.T) {
	previous := debug.SetGCPercent(100)
	t.Cleanup(func() { debug.SetGCPercent(previous) })

	t.Run("GOGC unset", func(t *testing.T) {
		t.Setenv("GOGC", "") // restores GOGC after the test
		os.Unsetenv("GOGC")
		debug.SetGCPercent(100)
		tuneGC()
		if got := debug.SetGCPercent(100); got != defaultGCPercent {
			t.Fatalf("GC percent %d, want %d", got, defaultGCPercent)
		}
	})
	t.Run("GOGC set", func(t *testing.T) {
		// The runtime applied GOGC at start; tuneGC must leave it alone.
		t.Setenv("GOGC", "150")
		debug.SetGCPercent(150)
		tuneGC()
		if got := debug.SetGCPercent(100); got != 150 {
			t.Fatalf("GC percent %d, want GOGC's 150", got)
		}
	})
}
