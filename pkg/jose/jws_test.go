package jose_test

import (
	"crypto"
	"crypto/hmac"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/liveproctor/workspaces/pkg/jose"
)

func enc(s string) string { return base64.RawURLEncoding.EncodeToString([]byte(s)) }

// signRaw signs any header and payload, as a platform or an attacker with the
// key could, for tokens Sign would never write.
func signRaw(t testing.TB, key *rsa.PrivateKey, header, payload string) string {
	t.Helper()
	input := enc(header) + "." + enc(payload)
	digest := sha256.Sum256([]byte(input))
	sig, err := rsa.SignPKCS1v15(nil, key, crypto.SHA256, digest[:])
	if err != nil {
		t.Fatal(err)
	}
	return input + "." + base64.RawURLEncoding.EncodeToString(sig)
}

// generatedKey is one 2048-bit key for the whole run; generating is slow.
var generatedKey = sync.OnceValues(func() (*rsa.PrivateKey, error) { return rsa.GenerateKey(rand.Reader, 2048) })

func newKey(t testing.TB) *rsa.PrivateKey {
	t.Helper()
	key, err := generatedKey()
	if err != nil {
		t.Fatal(err)
	}
	return key
}

// TestRoundTrip is the tool's path: sign a Deep Linking response, publish
// the key set, and a platform reading the set verifies the response.
func TestRoundTrip(t *testing.T) {
	key := newKey(t)
	now := time.Now().Truncate(time.Second)
	claims := map[string]any{
		"iss": "client-1", "aud": "https://platform.example", "iat": now.Unix(), "exp": now.Add(5 * time.Minute).Unix(),
		"nonce": "n-0",
		"https://purl.imsglobal.org/spec/lti/claim/message_type": "LtiDeepLinkingResponse",
	}
	token, err := jose.Sign(claims, "tool-2026", key)
	if err != nil {
		t.Fatal(err)
	}
	jwks, err := jose.MarshalKeySet([]jose.PublicKey{{KID: "tool-2026", Key: &key.PublicKey}})
	if err != nil {
		t.Fatal(err)
	}
	set, err := jose.ParseKeySet(jwks)
	if err != nil {
		t.Fatal(err)
	}
	h, err := jose.ParseHeader(token)
	if err != nil || h != (jose.Header{Alg: "RS256", KID: "tool-2026", Typ: "JWT"}) {
		t.Fatalf("ParseHeader = %+v, %v", h, err)
	}
	pub, ok := set.Key(h.KID)
	if !ok {
		t.Fatal("the published set lacks the signing key")
	}
	payload, err := jose.Verify(token, pub)
	if err != nil {
		t.Fatal(err)
	}
	c, err := jose.ParseClaims(payload)
	if err != nil {
		t.Fatal(err)
	}
	if c.Issuer != "client-1" || len(c.Audience) != 1 || c.Audience[0] != "https://platform.example" ||
		c.Nonce != "n-0" || !c.IssuedAt.Equal(now) || !c.Expiry.Equal(now.Add(5*time.Minute)) {
		t.Fatalf("claims = %+v", c)
	}
	var msgType string
	if err := json.Unmarshal(c.Raw["https://purl.imsglobal.org/spec/lti/claim/message_type"], &msgType); err != nil || msgType != "LtiDeepLinkingResponse" {
		t.Fatalf("message_type = %q, %v", msgType, err)
	}
	if err := c.CheckTime(now, time.Minute); err != nil {
		t.Fatal(err)
	}
	if _, err := jose.Verify(token, &rfc7515Key(t).PublicKey); !errors.Is(err, jose.ErrSignature) {
		t.Fatalf("Verify with another key = %v, want ErrSignature", err)
	}
}

func TestSignRefuses(t *testing.T) {
	key := rfc7515Key(t)
	small, err := rsa.GenerateKey(rand.Reader, 1024)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name   string
		claims any
		kid    string
		key    *rsa.PrivateKey
		want   error
	}{
		{"no kid", map[string]any{}, "", key, jose.ErrNoKID},
		{"no key", map[string]any{}, "k", nil, jose.ErrKey},
		{"1024-bit key", map[string]any{}, "k", small, jose.ErrKey},
		{"claims not an object", []string{"a"}, "k", key, jose.ErrMalformed},
		{"claims with a duplicate member", json.RawMessage(`{"sub":"a","sub":"b"}`), "k", key, jose.ErrMalformed},
	} {
		if _, err := jose.Sign(tc.claims, tc.kid, tc.key); !errors.Is(err, tc.want) {
			t.Errorf("%s: %v, want %v", tc.name, err, tc.want)
		}
	}
}

// TestVerifyRefuses: each token is validly signed with the key Verify is
// given (or derived from one that is), so only what the test names is wrong.
func TestVerifyRefuses(t *testing.T) {
	key := rfc7515Key(t)
	const payload = `{"iss":"https://platform.example","sub":"u1"}`
	good := signRaw(t, key, `{"alg":"RS256","kid":"k1"}`, payload)
	segs := strings.Split(good, ".")
	for _, tc := range []struct {
		name, token string
		want        error
	}{
		{"alg none, no signature", enc(`{"alg":"none","kid":"k1"}`) + "." + enc(payload) + ".", jose.ErrUnsecured},
		{"alg None, RSA-signed", signRaw(t, key, `{"alg":"None","kid":"k1"}`, payload), jose.ErrUnsecured},
		{"alg none, kid not a string", signRaw(t, key, `{"alg":"none","kid":1}`, payload), jose.ErrUnsecured},
		{"typ not a string", signRaw(t, key, `{"alg":"RS256","kid":"k1","typ":1}`, payload), jose.ErrMalformed},
		{"alg HS256", signRaw(t, key, `{"alg":"HS256","kid":"k1"}`, payload), jose.ErrAlgorithm},
		{"alg PS256", signRaw(t, key, `{"alg":"PS256","kid":"k1"}`, payload), jose.ErrAlgorithm},
		{"alg rs256", signRaw(t, key, `{"alg":"rs256","kid":"k1"}`, payload), jose.ErrAlgorithm},
		{"no alg", signRaw(t, key, `{"kid":"k1"}`, payload), jose.ErrAlgorithm},
		{"alg not a string", signRaw(t, key, `{"alg":["RS256"],"kid":"k1"}`, payload), jose.ErrMalformed},
		{"no kid", signRaw(t, key, `{"alg":"RS256"}`, payload), jose.ErrNoKID},
		{"empty kid", signRaw(t, key, `{"alg":"RS256","kid":""}`, payload), jose.ErrNoKID},
		{"kid not a string", signRaw(t, key, `{"alg":"RS256","kid":1}`, payload), jose.ErrMalformed},
		{"crit", signRaw(t, key, `{"alg":"RS256","kid":"k1","crit":["exp"],"exp":1}`, payload), jose.ErrCritical},
		{"duplicate alg, RS256 last", signRaw(t, key, `{"alg":"none","kid":"k1","alg":"RS256"}`, payload), jose.ErrMalformed},
		{"duplicate alg, escaped", signRaw(t, key, `{"alg":"RS256","kid":"k1","\u0061lg":"HS256"}`, payload), jose.ErrMalformed},
		{"duplicate kid", signRaw(t, key, `{"alg":"RS256","kid":"k1","kid":"k2"}`, payload), jose.ErrMalformed},
		{"header not an object", signRaw(t, key, `["RS256"]`, payload), jose.ErrMalformed},
		{"header with trailing data", signRaw(t, key, `{"alg":"RS256","kid":"k1"}{}`, payload), jose.ErrMalformed},
		{"header not UTF-8", signRaw(t, key, "{\"alg\":\"RS256\",\"kid\":\"k\xff\"}", payload), jose.ErrMalformed},
		{"two segments", segs[0] + "." + segs[1], jose.ErrMalformed},
		{"four segments", good + "." + segs[2], jose.ErrMalformed},
		{"empty", "", jose.ErrMalformed},
		{"padding on the signature", good + "==", jose.ErrMalformed},
		{"padding on the header", padded(segs[0]) + "." + segs[1] + "." + segs[2], jose.ErrMalformed},
		{"standard base64 alphabet", segs[0] + "." + segs[1] + "." + strings.NewReplacer("-", "+", "_", "/").Replace(segs[2]), jose.ErrMalformed},
		{"newline in the signature", segs[0] + "." + segs[1] + "." + segs[2][:40] + "\n" + segs[2][40:], jose.ErrMalformed},
		{"space before the token", " " + good, jose.ErrMalformed},
		{"non-canonical last character", segs[0] + "." + segs[1] + "." + nonCanonical(t, segs[2]), jose.ErrMalformed},
		{"oversize", signRaw(t, key, `{"alg":"RS256","kid":"k1"}`, `{"x":"`+strings.Repeat("a", jose.MaxTokenSize)+`"}`), jose.ErrTooLarge},
		{"empty signature", segs[0] + "." + segs[1] + ".", jose.ErrSignature},
		{"other payload", segs[0] + "." + enc(`{"iss":"https://platform.example","sub":"admin"}`) + "." + segs[2], jose.ErrSignature},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := jose.Verify(tc.token, &key.PublicKey); !errors.Is(err, tc.want) {
				t.Fatalf("Verify = %v, want %v", err, tc.want)
			}
			if tc.want == jose.ErrSignature {
				return
			}
			if _, err := jose.ParseHeader(tc.token); !errors.Is(err, tc.want) {
				t.Fatalf("ParseHeader = %v, want %v", err, tc.want)
			}
		})
	}
	if _, err := jose.Verify(good, &key.PublicKey); err != nil {
		t.Fatalf("the unaltered token: %v", err)
	}
}

// padded re-encodes a segment with its '=' padding, which RFC 7515 §2 omits.
func padded(seg string) string {
	b, _ := base64.RawURLEncoding.DecodeString(seg)
	s := base64.URLEncoding.EncodeToString(b)
	if !strings.HasSuffix(s, "=") {
		panic("the segment needs no padding; pick another")
	}
	return s
}

// nonCanonical changes a segment's last character so that it decodes to the
// same bytes with non-zero trailing bits, which lenient decoders accept.
func nonCanonical(t *testing.T, seg string) string {
	t.Helper()
	const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
	if len(seg)%4 == 0 {
		t.Fatal("the segment has no trailing bits")
	}
	last := strings.IndexByte(alphabet, seg[len(seg)-1])
	return seg[:len(seg)-1] + string(alphabet[last|1])
}

// TestVerifyRefusesHMACWithThePublicKey is the classic algorithm confusion: a
// verifier that lets the token pick the algorithm checks an HS256 MAC keyed
// with the public key's bytes, which anyone can compute.
func TestVerifyRefusesHMACWithThePublicKey(t *testing.T) {
	key := rfc7515Key(t)
	der, err := x509.MarshalPKIXPublicKey(&key.PublicKey)
	if err != nil {
		t.Fatal(err)
	}
	secrets := map[string][]byte{
		"PEM":     pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: der}),
		"DER":     der,
		"modulus": key.N.Bytes(),
		"JWKS":    []byte(rfc7515JWKS),
	}
	for name, secret := range secrets {
		for _, alg := range []string{"HS256", "RS256"} {
			input := enc(`{"alg":"`+alg+`","kid":"rfc7515-a2"}`) + "." + enc(`{"sub":"admin"}`)
			mac := hmac.New(sha256.New, secret)
			mac.Write([]byte(input))
			token := input + "." + base64.RawURLEncoding.EncodeToString(mac.Sum(nil))
			want := jose.ErrAlgorithm
			if alg == "RS256" {
				want = jose.ErrSignature
			}
			if _, err := jose.Verify(token, &key.PublicKey); !errors.Is(err, want) {
				t.Errorf("%s MAC over alg %s: %v, want %v", name, alg, err, want)
			}
		}
	}
}

func TestVerifyRefusesUnusableKeys(t *testing.T) {
	token := signRaw(t, rfc7515Key(t), `{"alg":"RS256","kid":"k1"}`, `{}`)
	small, err := rsa.GenerateKey(rand.Reader, 1024)
	if err != nil {
		t.Fatal(err)
	}
	evenE := rfc7515Key(t).PublicKey
	evenE.E = 65536
	for name, key := range map[string]*rsa.PublicKey{"nil": nil, "1024-bit": &small.PublicKey, "even exponent": &evenE} {
		if _, err := jose.Verify(token, key); !errors.Is(err, jose.ErrKey) {
			t.Errorf("%s key: %v, want ErrKey", name, err)
		}
	}
}

// TestErrorsCarryNoToken: an error's text names the reason, never a part of
// the token, which a caller may log or show.
func TestErrorsCarryNoToken(t *testing.T) {
	key := rfc7515Key(t)
	const marker = "SECRETMARKER"
	for _, token := range []string{
		signRaw(t, key, `{"alg":"`+marker+`","kid":"k1"}`, `{}`),
		signRaw(t, key, `{"alg":"RS256","kid":"k1","`+marker+`":1,"`+marker+`":2}`, `{}`),
		enc(marker) + "." + enc(marker) + ".",
		marker + "=." + marker + "." + marker,
	} {
		_, err := jose.Verify(token, &key.PublicKey)
		if err == nil || strings.Contains(err.Error(), marker) || strings.Contains(err.Error(), enc(marker)) {
			t.Errorf("error %q", err)
		}
	}
}
