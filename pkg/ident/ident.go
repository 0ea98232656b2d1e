// Package ident holds the identifiers every component agrees on: the shape
// of a workspace id, the random UUIDs app keys and secrets are made of, and
// the bearer secrets (NewSecret) that LTI flows' states, links and portal
// sessions are.
package ident

import (
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
)

// MaxWorkspaceIDLength is the longest workspace id.
const MaxWorkspaceIDLength = 128

// WorkspaceIDRule says what ValidWorkspaceID accepts, for error messages.
const WorkspaceIDRule = "must be 1 to 128 characters of A-Z, a-z, 0-9, '.', '_' or '-'"

// ValidWorkspaceID reports whether id is 1 to 128 characters of A-Z a-z
// 0-9 . _ - (no ':', which would clash with the ":undelete" verb).
func ValidWorkspaceID(id string) bool {
	if id == "" || len(id) > MaxWorkspaceIDLength {
		return false
	}
	for i := 0; i < len(id); i++ {
		switch c := id[i]; {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9', c == '.', c == '_', c == '-':
		default:
			return false
		}
	}
	return true
}

// NewUUID returns a random (version 4) UUID in its canonical form.
func NewUUID() string {
	var b [16]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read does not fail (it panics instead)
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

// SecretBytes is the size of a bearer secret: 256 random bits.
const SecretBytes = 32

// NewSecret returns a new bearer secret (an LTI login's state and nonce, a
// link's secret, a session's token): SecretBytes random bytes in base64url
// without padding, 43 characters that sit in a URL's path, a form or a
// cookie as they are.
func NewSecret() string {
	var b [SecretBytes]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read does not fail (it panics instead)
	return base64.RawURLEncoding.EncodeToString(b[:])
}

// IsSecret reports whether s has the shape NewSecret makes, so that
// nothing else reaches a store.
func IsSecret(s string) bool {
	if len(s) != base64.RawURLEncoding.EncodedLen(SecretBytes) {
		return false
	}
	b, err := base64.RawURLEncoding.DecodeString(s)
	return err == nil && len(b) == SecretBytes
}
