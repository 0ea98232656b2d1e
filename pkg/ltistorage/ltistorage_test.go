package ltistorage_test

import (
	"strings"
	"testing"

	"github.com/liveproctor/workspaces/pkg/ltistorage"
)

// What State writes, ParseState reads back; a cookie login's state, or a
// state whose parts are not a frame's name and an origin, names no storage.
func TestStateRoundTrip(t *testing.T) {
	state := ltistorage.State("c2VjcmV0", "_parent", "https://canvas.example:8443")
	target, origin, ok := ltistorage.ParseState(state)
	if !ok || target != "_parent" || origin != "https://canvas.example:8443" {
		t.Fatalf("ParseState(%q) = %q, %q, %v", state, target, origin, ok)
	}
	for _, bad := range []string{
		"c2VjcmV0",
		ltistorage.State("", "_parent", "https://canvas.example"),
		ltistorage.State("s", "bad name", "https://canvas.example"),
		ltistorage.State("s", strings.Repeat("a", ltistorage.MaxTarget+1), "https://canvas.example"),
		ltistorage.State("s", "_parent", "https://canvas.example/path"),
		ltistorage.State("s", "_parent", "javascript://x"),
		"s.not-base64!.x",
	} {
		if _, _, ok := ltistorage.ParseState(bad); ok {
			t.Errorf("ParseState(%q) read a storage", bad)
		}
	}
}

func TestValidTarget(t *testing.T) {
	for s, want := range map[string]bool{
		"_parent": true, "post_message_forwarding": true, "a.b-c_9": true,
		"": false, "a b": false, "é": false, strings.Repeat("x", ltistorage.MaxTarget): true,
		strings.Repeat("x", ltistorage.MaxTarget+1): false,
	} {
		if got := ltistorage.ValidTarget(s); got != want {
			t.Errorf("ValidTarget(%q) = %v, want %v", s, got, want)
		}
	}
}
