package httperr

import (
	"strings"

	"github.com/liveproctor/workspaces/pkg/clip"
)

// maxEchoRunes bounds how much of a caller's input (an unknown name, a
// value, a path) an answer quotes: enough to recognise it, never enough to
// turn a large request into a large answer.
const maxEchoRunes = 64

// Echo returns the caller's text s as an answer may quote it: valid UTF-8
// (each invalid byte becomes U+FFFD) and at most maxEchoRunes characters,
// followed by "…" when cut.
func Echo(s string) string {
	return strings.ToValidUTF8(clip.Runes(s, maxEchoRunes), "\uFFFD")
}
