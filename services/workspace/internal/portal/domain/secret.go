package domain

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"strings"
)

// secretBytes is the size of a link's secret and of a session's token.
const secretBytes = 32

// NewSecret is a new bearer secret: a link's, or a session's token. 32
// random bytes, base64url without padding, so that it sits in a URL's path
// and in a cookie as it is.
func NewSecret() string {
	var b [secretBytes]byte
	_, _ = rand.Read(b[:]) // it never fails (Go 1.24 and later)
	return base64.RawURLEncoding.EncodeToString(b[:])
}

// IsSecret reports whether s has the shape NewSecret makes, so that
// nothing else reaches a store.
func IsSecret(s string) bool {
	if len(s) != base64.RawURLEncoding.EncodedLen(secretBytes) {
		return false
	}
	b, err := base64.RawURLEncoding.DecodeString(s)
	return err == nil && len(b) == secretBytes
}

// Digest is what is kept of a secret: its SHA-256, in hex. A store holds
// digests only, so that reading it yields no link and no session.
func Digest(secret string) string {
	sum := sha256.Sum256([]byte(secret))
	return hex.EncodeToString(sum[:])
}

// OpenURL is the link the administrator is sent: the gateway's page that
// opens it, below the public base URL.
func OpenURL(baseURL, secret string) string {
	return strings.TrimRight(baseURL, "/") + "/portal/open/" + secret
}

// IsLinkID reports whether id has the shape of a link's id (a UUID, as
// ident.NewUUID makes), so that no other reaches a store.
func IsLinkID(id string) bool {
	if len(id) != 36 {
		return false
	}
	for i, c := range id {
		switch {
		case i == 8 || i == 13 || i == 18 || i == 23:
			if c != '-' {
				return false
			}
		case !('0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'):
			return false
		}
	}
	return true
}
