package jose

import (
	"crypto"
	"crypto/rsa"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"strings"
)

// Header is what a token's JOSE header says, as far as this package reads it.
type Header struct {
	Alg string // RS256 whenever ParseHeader accepts the header
	KID string // names the signing key in the signer's key set; never empty
	Typ string // usually "JWT"; empty when absent; not checked
}

// ParseHeader checks a token as Verify does except for the signature, and
// returns its header, so that the caller can pick the key by KID, and fetch
// the key set again when it does not know the KID. A token Verify would
// refuse for its form, size or header is refused here too, before any fetch.
func ParseHeader(token string) (Header, error) {
	p, err := split(token)
	if err != nil {
		return Header{}, err
	}
	return parseHeader(p.header)
}

// Verify checks a JWS in compact serialization and returns its payload, for
// ParseClaims. It refuses, in this order:
//   - a token over MaxTokenSize (ErrTooLarge);
//   - anything but three segments of canonical, unpadded base64url, or a
//     header that is not a JSON object naming each member once
//     (ErrMalformed);
//   - alg "none" (ErrUnsecured) or any alg but RS256 (ErrAlgorithm);
//   - a crit member (ErrCritical);
//   - a missing or empty kid (ErrNoKID);
//   - a signature that does not verify with key, RSASSA-PKCS1-v1_5 over
//     SHA-256 of the first two segments as sent (ErrSignature).
//
// A key outside this package's bounds is ErrKey. The payload's claims are not
// looked at: ParseClaims and Claims.CheckTime do that.
func Verify(token string, key *rsa.PublicKey) ([]byte, error) {
	p, err := split(token)
	if err != nil {
		return nil, err
	}
	if _, err := parseHeader(p.header); err != nil {
		return nil, err
	}
	if err := p.verify(key); err != nil {
		return nil, err
	}
	return p.payload, nil
}

// Sign returns a compact JWS of claims, encoded with encoding/json, under the
// header {"alg":"RS256","typ":"JWT","kid":kid}, signed with key. claims must
// encode as a JSON object naming each member once (ErrMalformed); kid must
// not be empty (ErrNoKID); key must be within this package's bounds (ErrKey).
func Sign(claims any, kid string, key *rsa.PrivateKey) (string, error) {
	if kid == "" {
		return "", ErrNoKID
	}
	if key == nil {
		return "", ErrKey
	}
	if err := checkKey(&key.PublicKey); err != nil {
		return "", err
	}
	payload, err := json.Marshal(claims)
	if err != nil {
		return "", fmt.Errorf("jose: encoding the claims: %w", err)
	}
	if err := CheckObject(payload); err != nil {
		return "", fmt.Errorf("jose: the claims: %w", err)
	}
	header, err := json.Marshal(struct {
		Alg string `json:"alg"`
		Typ string `json:"typ"`
		KID string `json:"kid"`
	}{RS256, "JWT", kid})
	if err != nil {
		return "", fmt.Errorf("jose: encoding the header: %w", err)
	}
	signingInput := b64.EncodeToString(header) + "." + b64.EncodeToString(payload)
	digest := sha256.Sum256([]byte(signingInput))
	sig, err := rsa.SignPKCS1v15(nil, key, crypto.SHA256, digest[:])
	if err != nil {
		return "", fmt.Errorf("jose: signing: %w", err)
	}
	return signingInput + "." + b64.EncodeToString(sig), nil
}

// compact is a token split into its decoded segments.
type compact struct {
	signingInput               string // the first two segments and their dot, as sent
	header, payload, signature []byte
}

func split(token string) (compact, error) {
	if len(token) > MaxTokenSize {
		return compact{}, ErrTooLarge
	}
	if strings.Count(token, ".") != 2 {
		return compact{}, malformed("not three segments")
	}
	segs := strings.SplitN(token, ".", 3)
	p := compact{signingInput: token[:len(segs[0])+1+len(segs[1])]}
	for i, dst := range []*[]byte{&p.header, &p.payload, &p.signature} {
		b, ok := decodeBase64URL(segs[i])
		if !ok {
			return compact{}, malformed("a segment is not canonical unpadded base64url")
		}
		*dst = b
	}
	return p, nil
}

func (p compact) verify(key *rsa.PublicKey) error {
	if err := checkKey(key); err != nil {
		return err
	}
	digest := sha256.Sum256([]byte(p.signingInput))
	if rsa.VerifyPKCS1v15(key, crypto.SHA256, digest[:], p.signature) != nil {
		return ErrSignature
	}
	return nil
}

// parseHeader applies Verify's header rules. alg is read and checked before
// any other member, so that "none" and HMAC tokens are named as such.
func parseHeader(data []byte) (Header, error) {
	m, err := members(data)
	if err != nil {
		return Header{}, err
	}
	var h Header
	if err := stringMember(m, "alg", &h.Alg); err != nil {
		return Header{}, err
	}
	switch {
	case strings.EqualFold(h.Alg, "none"):
		return Header{}, ErrUnsecured
	case h.Alg != RS256:
		return Header{}, ErrAlgorithm
	}
	if _, ok := m["crit"]; ok {
		return Header{}, ErrCritical
	}
	if err := stringMember(m, "kid", &h.KID); err != nil {
		return Header{}, err
	}
	if h.KID == "" {
		return Header{}, ErrNoKID
	}
	if err := stringMember(m, "typ", &h.Typ); err != nil {
		return Header{}, err
	}
	return h, nil
}

// checkKey holds an RSA public key to the bounds this package uses keys in.
func checkKey(k *rsa.PublicKey) error {
	if k == nil || k.N == nil {
		return ErrKey
	}
	if bits := k.N.BitLen(); bits < MinKeyBits || bits > MaxKeyBits || k.N.Bit(0) == 0 {
		return ErrKey
	}
	if k.E < 3 || k.E > 1<<31-1 || k.E%2 == 0 {
		return ErrKey
	}
	return nil
}
