package app

import (
	"testing"
	"time"

	"github.com/liveproctor/workspaces/pkg/fault"
	"github.com/liveproctor/workspaces/services/workspace/internal/domain"
)

// An event page token decodes to the position it was made from, only for
// the list it was made for; anything else sent as a token is the one
// Invalid pageToken error.
func FuzzEventPageToken(f *testing.F) {
	id := new(domain.EventIDSource).Next(time.Date(2026, 11, 22, 8, 0, 0, 0, time.UTC))
	f.Add(encodeEventPageToken(id, "f1"), "f1")
	f.Add(encodeEventPageToken("", "f1"), "f2")
	f.Add("garbage", "")
	f.Add("eyJhIjoienp6IiwiZiI6ImYxIn0", "f1")
	f.Fuzz(func(t *testing.T, token, filter string) {
		after, err := decodeEventPageToken(token, filter)
		if err != nil {
			if err != errBadEventPageToken || fault.KindOf(err) != fault.Invalid {
				t.Fatalf("decode %q: error %v, want the bad page token error", token, err)
			}
			return
		}
		if _, ok := domain.EventIDTime(after); after != "" && !ok {
			t.Fatalf("decode %q admitted a position %q that is not an event id", token, after)
		}
		again, err := decodeEventPageToken(encodeEventPageToken(after, filter), filter)
		if err != nil || again != after {
			t.Fatalf("re-encoded token of %q decodes to %q, %v", after, again, err)
		}
		if _, err := decodeEventPageToken(token, filter+"x"); err == nil {
			t.Fatalf("token %q decodes for another list", token)
		}
	})
}
