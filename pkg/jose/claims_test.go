package jose_test

import (
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/liveproctor/workspaces/pkg/jose"
)

func TestParseClaims(t *testing.T) {
	c, err := jose.ParseClaims([]byte(`{"iss":"https://platform.example","sub":"u1","aud":["c1","c2"],"azp":"c1",
		"exp":1700000300.25,"iat":1700000000,"nbf":1.7e9,"nonce":"n","https://purl.imsglobal.org/spec/lti/claim/version":"1.3.0"}`))
	if err != nil {
		t.Fatal(err)
	}
	if c.Issuer != "https://platform.example" || c.Subject != "u1" || !slices.Equal(c.Audience, []string{"c1", "c2"}) ||
		c.AuthorizedParty != "c1" || c.Nonce != "n" ||
		!c.Expiry.Equal(time.Unix(1700000300, 250_000_000)) || !c.IssuedAt.Equal(time.Unix(1700000000, 0)) ||
		!c.NotBefore.Equal(time.Unix(1700000000, 0)) {
		t.Fatalf("claims = %+v", c)
	}
	if got := string(c.Raw["https://purl.imsglobal.org/spec/lti/claim/version"]); got != `"1.3.0"` {
		t.Fatalf("Raw version = %s", got)
	}
	one, err := jose.ParseClaims([]byte(`{"aud":"c1"}`))
	if err != nil || !slices.Equal(one.Audience, []string{"c1"}) {
		t.Fatalf("aud as a string: %q, %v", one.Audience, err)
	}
	// Names are case-sensitive (RFC 7519 §4): EXP is not exp.
	upper, err := jose.ParseClaims([]byte(`{"EXP":"soon","Aud":1}`))
	if err != nil || !upper.Expiry.IsZero() || upper.Audience != nil {
		t.Fatalf("upper-case names: %+v, %v", upper, err)
	}
}

func TestParseClaimsRefuses(t *testing.T) {
	for _, payload := range []string{
		`{"aud":1}`,
		`{"aud":null}`,
		`{"aud":["c1",2]}`,
		`{"aud":["c1",null]}`,
		`{"aud":{"c1":true}}`,
		`{"exp":"1700000000"}`,
		`{"exp":null}`,
		`{"iat":true}`,
		`{"nbf":[1]}`,
		`{"exp":-1}`,
		`{"exp":1e300}`,
		`{"exp":1e400}`,
		`{"iss":5}`,
		`{"sub":null}`,
		`{"nonce":["n"]}`,
		`{"sub":"u1","sub":"admin"}`,
		`{"x":{"a":1,"a":2}}`,
		`[{"sub":"u1"}]`,
		`{"sub":"u1"} {}`,
		``,
		"{\"sub\":\"\xff\"}",
	} {
		if _, err := jose.ParseClaims([]byte(payload)); !errors.Is(err, jose.ErrMalformed) {
			t.Errorf("%s: %v, want ErrMalformed", payload, err)
		}
	}
}

// TestCheckTime walks the edges of a 60-second leeway.
func TestCheckTime(t *testing.T) {
	const leeway = 60 * time.Second
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	at := func(d time.Duration) time.Time { return now.Add(d) }
	valid := jose.Claims{IssuedAt: at(-time.Minute), Expiry: at(5 * time.Minute)}
	for _, tc := range []struct {
		name   string
		change func(*jose.Claims)
		want   error
	}{
		{"valid", func(*jose.Claims) {}, nil},
		{"iat 5s ahead", func(c *jose.Claims) { c.IssuedAt = at(5 * time.Second) }, nil},
		{"iat 60s ahead", func(c *jose.Claims) { c.IssuedAt = at(leeway) }, nil},
		{"iat 61s ahead", func(c *jose.Claims) { c.IssuedAt = at(61 * time.Second) }, jose.ErrIssuedInFuture},
		{"iat 120s ahead", func(c *jose.Claims) { c.IssuedAt = at(120 * time.Second) }, jose.ErrIssuedInFuture},
		{"exp 30s past", func(c *jose.Claims) { c.Expiry = at(-30 * time.Second) }, nil},
		{"exp 59.999s past", func(c *jose.Claims) { c.Expiry = at(-leeway + time.Millisecond) }, nil},
		{"exp 60s past", func(c *jose.Claims) { c.Expiry = at(-leeway) }, jose.ErrExpired},
		{"exp 61s past", func(c *jose.Claims) { c.Expiry = at(-61 * time.Second) }, jose.ErrExpired},
		{"nbf 60s ahead", func(c *jose.Claims) { c.NotBefore = at(leeway) }, nil},
		{"nbf 61s ahead", func(c *jose.Claims) { c.NotBefore = at(61 * time.Second) }, jose.ErrNotYetValid},
		{"no exp", func(c *jose.Claims) { c.Expiry = time.Time{} }, jose.ErrMissingClaim},
		{"no iat", func(c *jose.Claims) { c.IssuedAt = time.Time{} }, jose.ErrMissingClaim},
		{"exp at the epoch", func(c *jose.Claims) { c.Expiry = time.Unix(0, 0) }, jose.ErrExpired},
	} {
		c := valid
		tc.change(&c)
		if err := c.CheckTime(now, leeway); !errors.Is(err, tc.want) {
			t.Errorf("%s: %v, want %v", tc.name, err, tc.want)
		}
	}
	if err := (jose.Claims{IssuedAt: now, Expiry: at(-time.Second)}).CheckTime(now, -time.Hour); !errors.Is(err, jose.ErrExpired) {
		t.Errorf("negative leeway: %v, want ErrExpired", err)
	}
}

// TestCheckTimeFromToken: a missing exp in a real payload reaches CheckTime
// as ErrMissingClaim.
func TestCheckTimeFromToken(t *testing.T) {
	c, err := jose.ParseClaims([]byte(`{"iat":1700000000}`))
	if err != nil {
		t.Fatal(err)
	}
	if err := c.CheckTime(time.Unix(1700000000, 0), time.Minute); !errors.Is(err, jose.ErrMissingClaim) {
		t.Fatalf("exp missing: %v, want ErrMissingClaim", err)
	}
}
