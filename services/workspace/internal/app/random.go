package app

import (
	"crypto/rand"
	"encoding/hex"
)

// newUUID returns a random (version 4) UUID, the form of app keys and secrets.
func newUUID() string {
	var b [16]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails on Linux (Go 1.24+ panics instead)
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	var out [36]byte
	hex.Encode(out[0:8], b[0:4])
	out[8] = '-'
	hex.Encode(out[9:13], b[4:6])
	out[13] = '-'
	hex.Encode(out[14:18], b[6:8])
	out[18] = '-'
	hex.Encode(out[19:23], b[8:10])
	out[23] = '-'
	hex.Encode(out[24:], b[10:])
	return string(out[:])
}

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
