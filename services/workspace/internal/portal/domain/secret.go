package domain

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"
)

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
