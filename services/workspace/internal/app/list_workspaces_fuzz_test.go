package app

import (
	"errors"
	"testing"
	"unicode/utf8"

	"github.com/liveproctor/workspaces/pkg/fault"
	"github.com/liveproctor/workspaces/pkg/ident"
	"github.com/liveproctor/workspaces/services/workspace/internal/domain"
)

// A page token decodes to the position and filter it was made from, and
// only with that filter; anything else a caller sends as a token is the one
// Invalid pageToken error, never another kind, and whatever it admits
// makes a token that decodes to the same position again.
func FuzzPageToken(f *testing.F) {
	f.Add(encodePageToken(domain.ListPosition{NameKey: "springfield", ID: "springfield-district"}, digestOf("spring")), "springfield", "springfield-district", "spring")
	f.Add("garbage", "é", "a", "")
	f.Add("", "", "", "")
	f.Add("eyJrIjoiIiwiaSI6IiIsImYiOiIifQ", "\xff", "x", "")  // {"k":"","i":"","f":""}
	f.Add("eyJrIjoxLCJpIjoieCIsImYiOiIifQ", "", "x", "")      // {"k":1,"i":"x","f":""}
	f.Add("e30", "", "id", "f")                               // {}
	f.Add("eyJrIjoiYSIsImkiOiJ4IiwiZiI6IiJ9==", "a", "x", "") // padded
	f.Add("eyJrIjoiYSIsImkiOiJ4IiwiZiI6IiJ9+/", "a", "x", "") // the standard alphabet's bytes
	f.Fuzz(func(t *testing.T, token, nameKey, id, search string) {
		filter := digestOf(search)
		pos, err := decodePageToken(token, filter)
		if err != nil {
			if e, ok := fault.As(err); !ok || !errors.Is(err, errBadPageToken) || e.Kind != fault.Invalid ||
				len(e.Fields) != 1 || e.Fields[0].Field != "pageToken" {
				t.Fatalf("decodePageToken(%q) = %v, want the Invalid pageToken error", token, err)
			}
		} else {
			if pos.ID == "" {
				t.Fatalf("decodePageToken(%q) admitted a position without an id", token)
			}
			if again, err := decodePageToken(encodePageToken(pos, filter), filter); err != nil || again != pos {
				t.Fatalf("decodePageToken(%q) = %+v, which encodes to a token of %+v, %v", token, pos, again, err)
			}
		}

		// Names are valid UTF-8 and ids follow the id rule (the domain
		// refuses others): such positions round-trip.
		if !ident.ValidWorkspaceID(id) || !utf8.ValidString(nameKey) {
			return
		}
		want := domain.ListPosition{NameKey: nameKey, ID: id}
		issued := encodePageToken(want, filter)
		if got, err := decodePageToken(issued, filter); err != nil || got != want {
			t.Fatalf("the token of %+v decodes to %+v, %v", want, got, err)
		}
		if _, err := decodePageToken(issued, digestOf(search+"x")); !errors.Is(err, errBadPageToken) {
			t.Fatalf("the token of %+v was admitted with another filter: %v", want, err)
		}
	})
}

// digestOf is the filter digest of the root's list with a name search.
func digestOf(search string) string {
	return filterDigest("root", domain.ListQuery{NameContains: domain.NameKey(search)})
}
