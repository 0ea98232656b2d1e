// Package jose reads and writes the JSON Web Tokens of LTI 1.3 (1EdTech LTI
// Core 1.3 and Security Framework 1.0): it verifies a platform's id_token, a
// JWS in compact serialization (RFC 7515) signed with RS256 (RFC 7518
// §3.3), against the platform's JSON Web Key Set (RFC 7517), and it signs the
// tool's own tokens, such as the Deep Linking response, with the tool's RSA
// keys, whose public halves it writes as a key set.
//
// That is its whole scope: one algorithm (RSASSA-PKCS1-v1_5 with SHA-256),
// one serialization, RSA keys only, no encryption. It is written on the
// standard library rather than on a general JOSE library because RS256-only
// verification is small, and a narrow implementation has no
// algorithm-confusion surface: a token's alg never chooses how it is
// verified, it is only checked to be RS256, and the key is always an RSA
// public key the caller looked up by kid, never one the header names (jwk,
// jku, x5u are ignored).
//
// It is strict where libraries are often lenient, because a token is
// attacker-controlled until its signature checks: exactly three segments of
// unpadded, canonical base64url; a header and claims set that are JSON
// objects in UTF-8 naming each member once; no crit header; bounded sizes.
// Errors are the values below, possibly wrapped with a short reason; none
// carries key material or any part of a token.
//
// It imports nothing of this repository, so any service can use it.
package jose

import (
	"encoding/base64"
	"errors"
	"fmt"
)

// RS256 is the only algorithm this package verifies or signs with.
const RS256 = "RS256"

// Bounds on what this package reads and the keys it uses.
const (
	// MaxTokenSize bounds, in bytes, a token that Verify or ParseHeader
	// reads. An LTI launch's id_token is a few KiB (user, context, resource
	// link, custom parameters); 16 KiB leaves room and bounds the work an
	// unauthenticated request causes. Sign is not bounded by it.
	MaxTokenSize = 16 << 10
	// MaxKeySetSize bounds, in bytes, a key set ParseKeySet reads; the
	// caller fetching one should read at most this much plus one byte
	// (io.LimitReader) and let ParseKeySet refuse the rest.
	MaxKeySetSize = 256 << 10
	// MaxKeys bounds the entries of a key set, usable or not.
	MaxKeys = 100
	// MinKeyBits and MaxKeyBits bound an RSA modulus.
	MinKeyBits = 2048
	MaxKeyBits = 8192
)

// Errors this package answers, possibly wrapped with a short reason; test
// them with errors.Is. A caller maps them to its own messages.
var (
	// ErrTooLarge: the token is longer than MaxTokenSize.
	ErrTooLarge = errors.New("jose: token too large")
	// ErrMalformed: not three segments of canonical, unpadded base64url, or
	// a header or claims set that is not a JSON object in UTF-8 naming each
	// member once, or a member of the wrong type.
	ErrMalformed = errors.New("jose: malformed token")
	// ErrAlgorithm: the header's alg is absent or not RS256.
	ErrAlgorithm = errors.New("jose: algorithm is not RS256")
	// ErrUnsecured: the header's alg is "none"; it wraps ErrAlgorithm.
	ErrUnsecured = fmt.Errorf("%w: unsecured (alg none)", ErrAlgorithm)
	// ErrCritical: the header has crit; no extension is understood here.
	ErrCritical = errors.New("jose: header has critical extensions")
	// ErrNoKID: the header has no kid, or an empty one.
	ErrNoKID = errors.New("jose: header has no kid")
	// ErrSignature: the signature does not verify with the key given.
	ErrSignature = errors.New("jose: signature does not verify")
	// ErrMissingClaim: exp or iat is absent.
	ErrMissingClaim = errors.New("jose: required claim missing")
	// ErrExpired: now is at or past exp plus the leeway.
	ErrExpired = errors.New("jose: token expired")
	// ErrNotYetValid: nbf is later than now plus the leeway.
	ErrNotYetValid = errors.New("jose: token not yet valid")
	// ErrIssuedInFuture: iat is later than now plus the leeway.
	ErrIssuedInFuture = errors.New("jose: token issued in the future")
	// ErrKeySet: a key set is refused as a whole.
	ErrKeySet = errors.New("jose: unusable key set")
	// ErrKey: an RSA key given to Verify, Sign or MarshalKeySet is nil, its
	// modulus is outside MinKeyBits..MaxKeyBits or even, or its exponent is
	// not odd and within 3..2^31-1.
	ErrKey = errors.New("jose: unusable RSA key")
)

func malformed(reason string) error { return fmt.Errorf("%w: %s", ErrMalformed, reason) }

// b64 is base64url without padding (RFC 7515 §2), refusing non-zero trailing
// bits so that each value has one encoding.
var b64 = base64.RawURLEncoding.Strict()

// decodeBase64URL decodes s strictly. encoding/base64 skips '\r' and '\n'
// even in strict mode, so every byte is checked to be of the alphabet first.
func decodeBase64URL(s string) ([]byte, bool) {
	for i := 0; i < len(s); i++ {
		if !isBase64URL(s[i]) {
			return nil, false
		}
	}
	b, err := b64.DecodeString(s)
	return b, err == nil
}

func isBase64URL(c byte) bool {
	return 'A' <= c && c <= 'Z' || 'a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '-' || c == '_'
}
