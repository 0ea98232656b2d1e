package jose_test

import (
	"bytes"
	"crypto/rsa"
	"encoding/base64"
	"errors"
	"math/big"
	"strings"
	"testing"
	"time"

	"github.com/liveproctor/workspaces/pkg/jose"
)

// packageErrors are the values every error of Verify, ParseHeader and
// ParseClaims must match.
var packageErrors = []error{
	jose.ErrTooLarge, jose.ErrMalformed, jose.ErrAlgorithm, jose.ErrCritical, jose.ErrNoKID,
	jose.ErrSignature, jose.ErrMissingClaim, jose.ErrExpired, jose.ErrNotYetValid,
	jose.ErrIssuedInFuture, jose.ErrKeySet, jose.ErrKey,
}

func isPackageError(err error) bool {
	for _, e := range packageErrors {
		if errors.Is(err, e) {
			return true
		}
	}
	return false
}

// FuzzVerify feeds Verify and ParseHeader any token, and any header and
// payload signed with a known key, and checks that:
//   - neither panics, and every error is one of the package's;
//   - a token Verify accepts has a header ParseHeader accepts, alg RS256 and
//     a kid, and its payload is the second segment decoded; another key
//     refuses it with ErrSignature;
//   - a signed header and payload verify exactly when ParseHeader accepts the
//     header (or the token is over MaxTokenSize), giving the payload back;
//   - ParseClaims and CheckTime of an accepted payload answer the package's
//     errors or nothing.
func FuzzVerify(f *testing.F) {
	key := rfc7515Key(f)
	// Any other odd modulus of the same size stands for another key; a
	// generated one would cost each fuzz worker a slow key generation.
	other := &rsa.PublicKey{N: new(big.Int).Add(key.N, big.NewInt(2)), E: key.E}
	f.Add(rfc7515Token, []byte(`{"alg":"RS256","kid":"k1","typ":"JWT"}`), []byte(`{"iss":"i","aud":["a"],"exp":1.5,"iat":1}`))
	f.Add(signRaw(f, key, `{"alg":"RS256","kid":"k1"}`, `{"sub":"u"}`), []byte(`{"alg":"RS256","kid":"k"}`), []byte(rfc7515Payload))
	f.Add(enc(`{"alg":"none"}`)+"."+enc(`{}`)+".", []byte(`{"alg":"HS256","kid":"k"}`), []byte(`{"aud":"a","nbf":2e9}`))
	f.Add("a.b.c", []byte(`{"alg":"RS256","kid":"k","crit":[]}`), []byte(`{"x":{"a":[1,{"b":2}],"a":3}}`))
	f.Add("..", []byte(`{"alg":"RS256","kid":"k","alg":"RS256"}`), []byte(`{"exp":"1"}`))
	f.Fuzz(func(t *testing.T, token string, header, payload []byte) {
		checkAnyToken(t, token, &key.PublicKey, other)
		unsigned := base64.RawURLEncoding.EncodeToString(header) + "." + base64.RawURLEncoding.EncodeToString(payload) + "."
		if _, err := jose.ParseHeader(unsigned); err != nil {
			if !isPackageError(err) {
				t.Fatalf("ParseHeader error %v is not the package's", err)
			}
			return
		}
		signed := signRaw(t, key, string(header), string(payload))
		got, err := jose.Verify(signed, &key.PublicKey)
		if err != nil {
			if !errors.Is(err, jose.ErrTooLarge) || len(signed) <= jose.MaxTokenSize {
				t.Fatalf("Verify of a signed token whose header is accepted: %v", err)
			}
			return
		}
		if !bytes.Equal(got, payload) {
			t.Fatalf("Verify gave %q, signed %q", got, payload)
		}
		checkClaims(t, got)
	})
}

func checkAnyToken(t *testing.T, token string, key, other *rsa.PublicKey) {
	t.Helper()
	payload, err := jose.Verify(token, key)
	if err != nil {
		if !isPackageError(err) {
			t.Fatalf("Verify error %v is not the package's", err)
		}
		if _, err := jose.ParseHeader(token); err != nil && !isPackageError(err) {
			t.Fatalf("ParseHeader error %v is not the package's", err)
		}
		return
	}
	h, err := jose.ParseHeader(token)
	if err != nil || h.Alg != jose.RS256 || h.KID == "" {
		t.Fatalf("Verify accepted a token whose header is %+v, %v", h, err)
	}
	want, err := base64.RawURLEncoding.DecodeString(strings.Split(token, ".")[1])
	if err != nil || !bytes.Equal(payload, want) {
		t.Fatalf("Verify gave %q, the token carries %q", payload, want)
	}
	if _, err := jose.Verify(token, other); !errors.Is(err, jose.ErrSignature) {
		t.Fatalf("another key: %v, want ErrSignature", err)
	}
	checkClaims(t, payload)
}

func checkClaims(t *testing.T, payload []byte) {
	t.Helper()
	c, err := jose.ParseClaims(payload)
	if err != nil {
		if !isPackageError(err) {
			t.Fatalf("ParseClaims error %v is not the package's", err)
		}
		return
	}
	if err := c.CheckTime(time.Unix(1700000000, 0), time.Minute); err != nil && !isPackageError(err) {
		t.Fatalf("CheckTime error %v is not the package's", err)
	}
}
