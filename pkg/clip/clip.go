// Package clip is the one way the services shorten text they quote (a
// caller's id, a platform's error, a header) in a message: by characters,
// never cutting one in half.
//
// A bound in bytes is a bound in characters divided by four: n runes are at
// most 4n bytes (plus the three of "…"), so a caller with a byte budget
// passes n = budget/4 rather than cutting bytes.
package clip

// Runes returns s if it has at most n runes; otherwise its first n runes
// followed by "…". A byte that is not UTF-8 counts as one rune and is kept
// as it is: the cut falls only where a rune starts, and making the text
// valid (or quoting it) is the caller's business.
func Runes(s string, n int) string {
	count := 0
	for i := range s {
		if count == n {
			return s[:i] + "…"
		}
		count++
	}
	return s
}
