// Package ltistorage is the one statement of how an LTI 1.3 login kept in
// the platform's storage (1EdTech's postMessage storage, the
// lti_storage_target login parameter) is named: the frame names the
// workspace service accepts, and the state it hands out, which the
// gateway's launch page reads back to find the storage again. Both sides
// call it, so they cannot drift apart.
package ltistorage

import (
	"encoding/base64"
	"net/url"
	"strings"
)

// MaxTarget bounds a storage frame's name (lti_storage_target): no frame
// name a platform sends needs more.
const MaxTarget = 64

// ValidTarget reports whether target is 1 to MaxTarget of
// A-Z a-z 0-9 _ - . (a frame's name).
func ValidTarget(target string) bool {
	if target == "" || len(target) > MaxTarget {
		return false
	}
	for _, c := range []byte(target) {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-' || c == '.') {
			return false
		}
	}
	return true
}

// State is the state of a login kept in the platform's storage: the
// secret, then the storage frame's name and the platform's origin, each
// base64url, joined by dots. The launch reads where to find the state
// back from the state itself; the whole string is the login's key, so a
// changed part names no login.
func State(secret, target, origin string) string {
	enc := base64.RawURLEncoding.EncodeToString
	return secret + "." + enc([]byte(target)) + "." + enc([]byte(origin))
}

// ParseState reads the storage a State names. ok is false for any other
// state (a cookie login's), or one whose parts do not read as a frame's
// name and an origin (scheme://host[:port], nothing more).
func ParseState(state string) (target, origin string, ok bool) {
	parts := strings.Split(state, ".")
	if len(parts) != 3 || parts[0] == "" {
		return "", "", false
	}
	t, err1 := base64.RawURLEncoding.DecodeString(parts[1])
	o, err2 := base64.RawURLEncoding.DecodeString(parts[2])
	if err1 != nil || err2 != nil || !ValidTarget(string(t)) {
		return "", "", false
	}
	u, err := url.Parse(string(o))
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" || u.Path != "" || u.RawQuery != "" || u.User != nil {
		return "", "", false
	}
	return string(t), string(o), true
}
