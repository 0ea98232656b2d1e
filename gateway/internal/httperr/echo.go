package httperr

import (
	"strings"
	"unicode/utf8"
)

// maxEchoRunes bounds how much of a caller's input (an unknown name, a
// value, a path) an answer quotes: enough to recognise it, never enough to
// turn a large request into a large answer.
const maxEchoRunes = 64

// Echo returns the caller's text s as an answer may quote it: valid UTF-8
// (each invalid byte becomes U+FFFD) and at most maxEchoRunes characters,
// followed by "…" when cut.
func Echo(s string) string {
	n := 0
	for i := range s {
		if n == maxEchoRunes {
			return strings.ToValidUTF8(s[:i], "\uFFFD") + "…"
		}
		n++
	}
	if utf8.ValidString(s) {
		return s
	}
	return strings.ToValidUTF8(s, "\uFFFD")
}
