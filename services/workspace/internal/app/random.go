package app

import (
	"crypto/rand"
)

// codeAlphabet has no 0/O, 1/I/L or U, so codes read aloud or typed survive.
const codeAlphabet = "23456789ABCDEFGHJKMNPQRSTVWXYZ"

// registrationCodeLength gives 30^8 ≈ 6.6e11 codes; collisions are retried.
const registrationCodeLength = 8

// newRegistrationCode returns a short alphanumeric code that members use to
// join a workspace.
func newRegistrationCode() string {
	var b [registrationCodeLength]byte
	// Rejection sampling keeps every character equally likely.
	limit := byte(256 - 256%len(codeAlphabet))
	for i := 0; i < len(b); {
		var r [1]byte
		_, _ = rand.Read(r[:])
		if r[0] >= limit {
			continue
		}
		b[i] = codeAlphabet[int(r[0])%len(codeAlphabet)]
		i++
	}
	return string(b[:])
}
