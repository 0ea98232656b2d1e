package jose_test

import (
	"crypto/rsa"
	"encoding/base64"
	"errors"
	"math/big"
	"strings"
	"testing"

	"github.com/liveproctor/workspaces/pkg/jose"
)

// The RS256 example of RFC 7515 Appendix A.2
// (https://www.rfc-editor.org/rfc/rfc7515#appendix-A.2): the RSA key of
// A.2.1 as a JWK, and the compact serialization of A.2.1's result, header
// {"alg":"RS256"} (no kid). It is a published test vector; the signature was
// computed by the RFC's authors.
const (
	rfc7515Token = "eyJhbGciOiJSUzI1NiJ9" +
		".eyJpc3MiOiJqb2UiLA0KICJleHAiOjEzMDA4MTkzODAsDQogImh0dHA6Ly9leGFtcGxlLmNvbS9pc19yb290Ijp0cnVlfQ" +
		".cC4hiUPoj9Eetdgtv3hF80EGrhuB__dzERat0XF9g2VtQgr9PJbu3XOiZj5RZmh7AAuHIm4Bh-0Qc_lF5YKt_O8W2Fp5jujGbds9uJdbF9CUAr7t1dnZcAcQjbKBYNX4BAynRFdiuB--f_nZLgrnbyTyWzO75vRK5h6xBArLIARNPvkSjtQBMHlb1L07Qe7K0GarZRmB_eSN9383LcOLn6_dO--xi12jzDwusC-eOkHWEsqtFZESc6BfI7noOPqvhJ1phCnvWh6IeYI2w9QOYEUipUTI8np6LbgGY9Fs98rqVt5AXLIhWkWywlVmtVrBp0igcN_IoypGlUPQGe77Rw"
	rfc7515Payload = "{\"iss\":\"joe\",\r\n \"exp\":1300819380,\r\n \"http://example.com/is_root\":true}"

	rfc7515N = "ofgWCuLjybRlzo0tZWJjNiuSfb4p4fAkd_wWJcyQoTbji9k0l8W26mPddxHmfHQp-Vaw-4qPCJrcS2mJPMEzP1Pt0Bm4d4QlL-yRT-SFd2lZS-pCgNMsD1W_YpRPEwOWvG6b32690r2jZ47soMZo9wGzjb_7OMg0LOL-bSf63kpaSHSXndS5z5rexMdbBYUsLA9e-KXBdQOS-UTo7WTBEMa2R2CapHg665xsmtdVMTBQY4uDZlxvb3qCo5ZwKh9kG4LT6_I5IhlJH7aGhyxXFvUK-DWNmoudF8NAco9_h9iaGNj8q2ethFkMLs91kzk2PAcDTW9gb54h4FRWyuXpoQ"
	rfc7515E = "AQAB"
	rfc7515D = "Eq5xpGnNCivDflJsRQBXHx1hdR1k6Ulwe2JZD50LpXyWPEAeP88vLNO97IjlA7_GQ5sLKMgvfTeXZx9SE-7YwVol2NXOoAJe46sui395IW_GO-pWJ1O0BkTGoVEn2bKVRUCgu-GjBVaYLU6f3l9kJfFNS3E0QbVdxzubSu3Mkqzjkn439X0M_V51gfpRLI9JYanrC4D4qAdGcopV_0ZHHzQlBjudU2QvXt4ehNYTCBr6XCLQUShb1juUO1ZdiYoFaFQT5Tw8bGUl_x_jTj3ccPDVZFD9pIuhLhBOneufuBiB4cS98l2SR_RQyGWSeWjnczT0QU91p1DhOVRuOopznQ"
	rfc7515P = "4BzEEOtIpmVdVEZNCqS7baC4crd0pqnRH_5IB3jw3bcxGn6QLvnEtfdUdiYrqBdss1l58BQ3KhooKeQTa9AB0Hw_Py5PJdTJNPY8cQn7ouZ2KKDcmnPGBY5t7yLc1QlQ5xHdwW1VhvKn-nXqhJTBgIPgtldC-KDV5z-y2XDwGUc"
	rfc7515Q = "uQPEfgmVtjL0Uyyx88GZFF1fOunH3-7cepKmtH4pxhtCoHqpWmT8YAmZxaewHgHAjLYsp1ZSe7zFYHj7C6ul7TjeLQeZD_YwD66t62wDmpe_HlB-TnBA-njbglfIsRLtXlnDzQkv5dTltRJ11BKBBypeeF6689rjcJIDEz9RWdc"
)

// rfc7515JWKS is the example's public key as a key set, under a kid of our
// own (the RFC's key has none, and ParseKeySet keeps only keys with one).
const rfc7515JWKS = `{"keys":[{"kty":"RSA","kid":"rfc7515-a2","n":"` + rfc7515N + `","e":"` + rfc7515E + `"}]}`

// rfc7515Key is the example's private key, so that tests can sign with a
// known key without generating one.
func rfc7515Key(t testing.TB) *rsa.PrivateKey {
	t.Helper()
	num := func(s string) *big.Int {
		b, err := base64.RawURLEncoding.DecodeString(s)
		if err != nil {
			t.Fatal(err)
		}
		return new(big.Int).SetBytes(b)
	}
	key := &rsa.PrivateKey{
		PublicKey: rsa.PublicKey{N: num(rfc7515N), E: 65537},
		D:         num(rfc7515D),
		Primes:    []*big.Int{num(rfc7515P), num(rfc7515Q)},
	}
	if err := key.Validate(); err != nil {
		t.Fatal(err)
	}
	key.Precompute()
	return key
}

func TestRFC7515A2(t *testing.T) {
	set, err := jose.ParseKeySet([]byte(rfc7515JWKS))
	if err != nil {
		t.Fatal(err)
	}
	key, ok := set.Key("rfc7515-a2")
	if !ok {
		t.Fatal("the example's key is not in the set")
	}
	if key.N.Cmp(rfc7515Key(t).N) != 0 {
		t.Fatal("the key set's modulus differs from the example's")
	}
	if err := jose.CheckSignature(rfc7515Token, key); err != nil {
		t.Fatalf("the example's signature: %v", err)
	}
	// The public Verify requires a kid, which the example's header lacks.
	if _, err := jose.Verify(rfc7515Token, key); !errors.Is(err, jose.ErrNoKID) {
		t.Fatalf("Verify of the example = %v, want ErrNoKID", err)
	}

	segs := strings.Split(rfc7515Token, ".")
	for i, name := range []string{"header", "payload", "signature"} {
		for _, at := range []int{0, 7, -1} {
			b, err := base64.RawURLEncoding.DecodeString(segs[i])
			if err != nil {
				t.Fatal(err)
			}
			if at < 0 {
				at = len(b) - 1
			}
			b[at] ^= 0x01
			flipped := append([]string(nil), segs...)
			flipped[i] = base64.RawURLEncoding.EncodeToString(b)
			err = jose.CheckSignature(strings.Join(flipped, "."), key)
			if !errors.Is(err, jose.ErrSignature) {
				t.Errorf("%s byte %d flipped: %v, want ErrSignature", name, at, err)
			}
		}
	}
	if got, _ := base64.RawURLEncoding.DecodeString(segs[1]); string(got) != rfc7515Payload {
		t.Fatalf("the example's payload decodes to %q", got)
	}
}

// TestSignRawReproducesRFC7515: signRaw, which the other tests use to sign
// headers Sign would never write, gives the example's signature over its
// header and payload (RSASSA-PKCS1-v1_5 is deterministic), so a refusal of
// such a token is the header's doing, not a wrong signature's.
func TestSignRawReproducesRFC7515(t *testing.T) {
	got := signRaw(t, rfc7515Key(t), `{"alg":"RS256"}`, rfc7515Payload)
	if got != rfc7515Token {
		t.Fatalf("signature differs from the RFC's:\n got %s\nwant %s", got, rfc7515Token)
	}
}
