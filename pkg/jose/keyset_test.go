package jose_test

import (
	"crypto/rsa"
	"encoding/base64"
	"errors"
	"fmt"
	"math/big"
	"strings"
	"testing"

	"github.com/liveproctor/workspaces/pkg/jose"
)

// rsaJWK is a JWK of the RFC 7515 example's modulus with members to vary.
func rsaJWK(members string) string {
	return `{"kty":"RSA","n":"` + rfc7515N + `","e":"AQAB"` + members + `}`
}

func TestParseKeySetKeepsOnlyUsableKeys(t *testing.T) {
	bits := func(n int) string { // an odd modulus of n bits
		b := new(big.Int).Lsh(big.NewInt(1), uint(n-1))
		return base64.RawURLEncoding.EncodeToString(b.SetBit(b, 0, 1).Bytes())
	}
	keys := []string{
		rsaJWK(`,"kid":"plain"`),
		rsaJWK(`,"kid":"sig","use":"sig","alg":"RS256","key_ops":["verify"],"x5t":"x"`),
		`{"kty":"EC","kid":"ec","crv":"P-256","x":"f83OJ3D2xF1Bg8vub9tLe1gHMzV76e8Tus9uPHvRVEU","y":"x_FEzRu9m36HLN_tue659LNpXW6pCyStikYjKIWI5a0"}`,
		rsaJWK(`,"kid":"enc","use":"enc"`),
		rsaJWK(`,"kid":"rs512","alg":"RS512"`),
		rsaJWK(`,"kid":"use-null","use":null`),
		rsaJWK(``),
		rsaJWK(`,"kid":""`),
		rsaJWK(`,"kid":7`),
		`{"kty":"RSA","kid":"padded-n","n":"` + rfc7515N + `==","e":"AQAB"}`,
		`{"kty":"RSA","kid":"e-padded","n":"` + rfc7515N + `","e":"AQAB=="}`,
		`{"kty":"RSA","kid":"no-e","n":"` + rfc7515N + `"}`,
		`{"kty":"RSA","kid":"e-even","n":"` + rfc7515N + `","e":"AQAA"}`,
		`{"kty":"RSA","kid":"e-1","n":"` + rfc7515N + `","e":"AQ"}`,
		`{"kty":"RSA","kid":"e-2^32+1","n":"` + rfc7515N + `","e":"AQAAAAE"}`,
		`{"kty":"RSA","kid":"1024-bit","n":"` + bits(1024) + `","e":"AQAB"}`,
		`{"kty":"RSA","kid":"8193-bit","n":"` + bits(8193) + `","e":"AQAB"}`,
		`{"kty":"RSA","kid":"8192-bit","n":"` + bits(8192) + `","e":"AQAB"}`,
		`{"kty":"RSA","kid":"even-n","n":"` + base64.RawURLEncoding.EncodeToString(new(big.Int).Lsh(big.NewInt(1), 2047).Bytes()) + `","e":"AQAB"}`,
	}
	set, err := jose.ParseKeySet([]byte(`{"keys":[` + strings.Join(keys, ",") + `]}`))
	if err != nil {
		t.Fatal(err)
	}
	for _, kid := range []string{"plain", "sig", "8192-bit"} {
		if _, ok := set.Key(kid); !ok {
			t.Errorf("usable key %q was skipped", kid)
		}
	}
	for _, kid := range []string{"ec", "enc", "rs512", "use-null", "", "padded-n", "e-padded", "no-e", "e-even", "e-1", "e-2^32+1", "1024-bit", "8193-bit", "even-n"} {
		if _, ok := set.Key(kid); ok {
			t.Errorf("unusable key %q was kept", kid)
		}
	}
}

func TestParseKeySetRefuses(t *testing.T) {
	many := strings.Repeat(`{"kty":"oct","k":"AA"},`, jose.MaxKeys) + rsaJWK(`,"kid":"k"`)
	for _, tc := range []struct{ name, doc string }{
		{"not JSON", `keys`},
		{"an array", `[` + rsaJWK(`,"kid":"k"`) + `]`},
		{"no keys", `{}`},
		{"keys null", `{"keys":null}`},
		{"keys an object", `{"keys":{"k":` + rsaJWK(`,"kid":"k"`) + `}}`},
		{"a key not an object", `{"keys":[` + rsaJWK(`,"kid":"k"`) + `,"k2"]}`},
		{"no usable key", `{"keys":[` + rsaJWK(`,"use":"enc","kid":"k"`) + `]}`},
		{"empty", `{"keys":[]}`},
		{"duplicate kid", `{"keys":[` + rsaJWK(`,"kid":"k"`) + `,` + rsaJWK(`,"kid":"k","alg":"RS256"`) + `]}`},
		{"duplicate member", `{"keys":[` + rsaJWK(`,"kid":"k","kid":"j"`) + `]}`},
		{"duplicate keys member", `{"keys":[],"keys":[` + rsaJWK(`,"kid":"k"`) + `]}`},
		{"over MaxKeys", `{"keys":[` + many + `]}`},
		{"over MaxKeySetSize", `{"keys":[` + rsaJWK(`,"kid":"k"`) + `],"x":"` + strings.Repeat("a", jose.MaxKeySetSize) + `"}`},
	} {
		if _, err := jose.ParseKeySet([]byte(tc.doc)); !errors.Is(err, jose.ErrKeySet) {
			t.Errorf("%s: %v, want ErrKeySet", tc.name, err)
		}
	}
	// A duplicate kid among skipped keys is not a conflict.
	doc := `{"keys":[` + rsaJWK(`,"kid":"k"`) + `,` + rsaJWK(`,"kid":"k","use":"enc"`) + `]}`
	if _, err := jose.ParseKeySet([]byte(doc)); err != nil {
		t.Errorf("a usable and an encryption key sharing a kid: %v", err)
	}
}

func TestMarshalKeySet(t *testing.T) {
	pub := &rfc7515Key(t).PublicKey
	got, err := jose.MarshalKeySet([]jose.PublicKey{{KID: "a2", Key: pub}})
	if err != nil {
		t.Fatal(err)
	}
	want := `{"keys":[{"kty":"RSA","use":"sig","alg":"RS256","kid":"a2","n":"` + rfc7515N + `","e":"AQAB"}]}`
	if string(got) != want {
		t.Fatalf("MarshalKeySet =\n%s\nwant\n%s", got, want)
	}
	if got, err := jose.MarshalKeySet(nil); err != nil || string(got) != `{"keys":[]}` {
		t.Fatalf("MarshalKeySet(nil) = %s, %v", got, err)
	}
	small := &rsa.PublicKey{N: big.NewInt(3233), E: 17}
	for _, tc := range []struct {
		name string
		keys []jose.PublicKey
		want error
	}{
		{"no kid", []jose.PublicKey{{Key: pub}}, jose.ErrNoKID},
		{"duplicate kid", []jose.PublicKey{{"a", pub}, {"a", pub}}, jose.ErrKeySet},
		{"nil key", []jose.PublicKey{{"a", nil}}, jose.ErrKey},
		{"small key", []jose.PublicKey{{"a", small}}, jose.ErrKey},
		{"over MaxKeys", manyKeys(pub, jose.MaxKeys+1), jose.ErrKeySet},
	} {
		if _, err := jose.MarshalKeySet(tc.keys); !errors.Is(err, tc.want) {
			t.Errorf("%s: %v, want %v", tc.name, err, tc.want)
		}
	}
}

func manyKeys(pub *rsa.PublicKey, n int) []jose.PublicKey {
	keys := make([]jose.PublicKey, n)
	for i := range keys {
		keys[i] = jose.PublicKey{KID: fmt.Sprint(i), Key: pub}
	}
	return keys
}
