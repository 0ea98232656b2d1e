package jose

import (
	"crypto/rsa"
	"encoding/json"
	"fmt"
	"math/big"
)

// PublicKey is an RSA public key and the kid that names it in a key set.
type PublicKey struct {
	KID string
	Key *rsa.PublicKey
}

// KeySet is the usable keys of a JSON Web Key Set (RFC 7517 §5), by kid. The
// zero KeySet has none.
type KeySet struct {
	keys map[string]*rsa.PublicKey
}

// Key returns the key named kid.
func (s KeySet) Key(kid string) (*rsa.PublicKey, bool) {
	k, ok := s.keys[kid]
	return k, ok
}

// ParseKeySet reads a key set, {"keys":[…]}, keeping the keys Verify can use:
// kty "RSA"; use absent or "sig"; alg absent or "RS256"; a non-empty kid
// (tokens are matched to keys by kid only); n and e strict base64url as in a
// token, n an odd modulus of MinKeyBits..MaxKeyBits, e odd within 3..2^31-1.
// Other keys (EC, encryption, other algorithms, malformed members) are skipped.
//
// The whole set is refused (ErrKeySet) when it is over MaxKeySetSize, is not
// a JSON object naming each member once, has no keys array or an entry that
// is not an object, has more than MaxKeys entries, has no usable key, or has
// two usable keys with one kid. A kid must name one key: failing where the
// set is fetched, where the caller can keep its previous set and log why,
// beats trusting whichever duplicate comes first and failing launches later.
func ParseKeySet(data []byte) (KeySet, error) {
	if len(data) > MaxKeySetSize {
		return KeySet{}, fmt.Errorf("%w: larger than %d bytes", ErrKeySet, MaxKeySetSize)
	}
	m, err := members(data)
	if err != nil {
		return KeySet{}, fmt.Errorf("%w: not a JSON object naming each member once", ErrKeySet)
	}
	var entries []json.RawMessage
	if raw := m["keys"]; len(raw) == 0 || raw[0] != '[' || json.Unmarshal(raw, &entries) != nil {
		return KeySet{}, fmt.Errorf("%w: no keys array", ErrKeySet)
	}
	if len(entries) > MaxKeys {
		return KeySet{}, fmt.Errorf("%w: more than %d keys", ErrKeySet, MaxKeys)
	}
	set := KeySet{keys: make(map[string]*rsa.PublicKey)}
	for _, raw := range entries {
		jwk, err := members(raw)
		if err != nil {
			return KeySet{}, fmt.Errorf("%w: a key is not a JSON object", ErrKeySet)
		}
		kid, key, ok := usableKey(jwk)
		if !ok {
			continue
		}
		if _, dup := set.keys[kid]; dup {
			return KeySet{}, fmt.Errorf("%w: two usable keys share a kid", ErrKeySet)
		}
		set.keys[kid] = key
	}
	if len(set.keys) == 0 {
		return KeySet{}, fmt.Errorf("%w: no usable RS256 key with a kid", ErrKeySet)
	}
	return set, nil
}

// usableKey reads one JWK as an RS256 verification key, reporting false for a
// key this package cannot or should not use.
func usableKey(jwk map[string]json.RawMessage) (string, *rsa.PublicKey, bool) {
	var kty, use, alg, kid, n, e string
	for _, f := range []struct {
		name string
		dst  *string
	}{{"kty", &kty}, {"use", &use}, {"alg", &alg}, {"kid", &kid}, {"n", &n}, {"e", &e}} {
		if stringMember(jwk, f.name, f.dst) != nil {
			return "", nil, false
		}
	}
	_, hasUse := jwk["use"]
	_, hasAlg := jwk["alg"]
	if kty != "RSA" || kid == "" || hasUse && use != "sig" || hasAlg && alg != RS256 {
		return "", nil, false
	}
	nb, okN := decodeBase64URL(n)
	eb, okE := decodeBase64URL(e)
	if !okN || !okE || len(eb) == 0 || len(eb) > 4 {
		return "", nil, false
	}
	exp := 0
	for _, b := range eb {
		exp = exp<<8 | int(b)
	}
	key := &rsa.PublicKey{N: new(big.Int).SetBytes(nb), E: exp}
	if checkKey(key) != nil {
		return "", nil, false
	}
	return kid, key, true
}

// MarshalKeySet writes keys as a key set for a platform to fetch, each as
// {"kty":"RSA","use":"sig","alg":"RS256","kid":…,"n":…,"e":…}. Each key must
// have a kid of its own (ErrNoKID, ErrKeySet) and be within this package's
// bounds (ErrKey); at most MaxKeys. No keys give {"keys":[]}.
func MarshalKeySet(keys []PublicKey) ([]byte, error) {
	if len(keys) > MaxKeys {
		return nil, fmt.Errorf("%w: more than %d keys", ErrKeySet, MaxKeys)
	}
	type jwk struct {
		Kty string `json:"kty"`
		Use string `json:"use"`
		Alg string `json:"alg"`
		KID string `json:"kid"`
		N   string `json:"n"`
		E   string `json:"e"`
	}
	out := struct {
		Keys []jwk `json:"keys"`
	}{Keys: make([]jwk, 0, len(keys))}
	seen := make(map[string]bool, len(keys))
	for _, k := range keys {
		if k.KID == "" {
			return nil, ErrNoKID
		}
		if seen[k.KID] {
			return nil, fmt.Errorf("%w: two keys share a kid", ErrKeySet)
		}
		seen[k.KID] = true
		if err := checkKey(k.Key); err != nil {
			return nil, err
		}
		e := big.NewInt(int64(k.Key.E)).Bytes()
		out.Keys = append(out.Keys, jwk{"RSA", "sig", RS256, k.KID, b64.EncodeToString(k.Key.N.Bytes()), b64.EncodeToString(e)})
	}
	return json.Marshal(out)
}
