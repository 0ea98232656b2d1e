package clip_test

import (
	"testing"
	"unicode/utf8"

	"github.com/liveproctor/workspaces/pkg/clip"
)

func TestRunesKeepsWholeCharacters(t *testing.T) {
	for _, tc := range []struct {
		name string
		s    string
		n    int
		want string
	}{
		{"short", "abc", 5, "abc"},
		{"exact length", "abc", 3, "abc"},
		{"one over", "abcd", 3, "abc…"},
		{"empty", "", 3, ""},
		{"n zero", "abc", 0, "…"},
		{"n zero, empty", "", 0, ""},
		{"multi-byte, exact", "héllo", 5, "héllo"},
		{"multi-byte, cut after é", "héllo", 2, "hé…"},
		{"four-byte runes", "𝄞𝄞𝄞", 2, "𝄞𝄞…"},
		{"invalid byte counts as one", "a\xffbc", 2, "a\xff…"},
		{"truncated sequence before a character", "\xe2\x82é", 2, "\xe2\x82…"},
		{"invalid tail kept whole", "ab\xff", 3, "ab\xff"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := clip.Runes(tc.s, tc.n); got != tc.want {
				t.Errorf("Runes(%q, %d) = %q, want %q", tc.s, tc.n, got, tc.want)
			}
		})
	}
}

func TestRunesOfValidTextIsValidAndBounded(t *testing.T) {
	s := "ü€𝄞a"
	for n := 0; n <= 5; n++ {
		got := clip.Runes(s, n)
		if !utf8.ValidString(got) {
			t.Errorf("Runes(%q, %d) = %q: not valid UTF-8", s, n, got)
		}
		if len(got) > 4*n+len("…") {
			t.Errorf("Runes(%q, %d) has %d bytes, more than 4n+3", s, n, len(got))
		}
	}
}
