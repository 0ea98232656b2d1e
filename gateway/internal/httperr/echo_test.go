package httperr

import (
	"strings"
	"testing"
)

func TestEcho(t *testing.T) {
	for in, want := range map[string]string{
		"":                         "",
		"abc":                      "abc",
		strings.Repeat("a", 64):    strings.Repeat("a", 64),
		strings.Repeat("a", 65):    strings.Repeat("a", 64) + "…",
		strings.Repeat("é", 900):   strings.Repeat("é", 64) + "…",
		"a\xffb":                   "a\uFFFDb",
		strings.Repeat("\xff", 70): strings.Repeat("\uFFFD", 1) + "…",
	} {
		if got := Echo(in); got != want {
			t.Errorf("Echo(%.20q…) = %q, want %q", in, got, want)
		}
	}
}
