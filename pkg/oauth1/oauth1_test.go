package oauth1_test

import (
	"errors"
	"slices"
	"testing"

	"github.com/liveproctor/workspaces/pkg/oauth1"
)

func TestEncode(t *testing.T) {
	for in, want := range map[string]string{
		"":                "",
		"abcXYZ019-._~":   "abcXYZ019-._~",
		"a b":             "a%20b",
		"a+b":             "a%2Bb",
		"*'()!":           "%2A%27%28%29%21",
		"=&%":             "%3D%26%25",
		"é":               "%C3%A9",
		"\x00\xff":        "%00%FF",
		"user@school.edu": "user%40school.edu",
	} {
		if got := oauth1.Encode(in); got != want {
			t.Errorf("Encode(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestBaseURI(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"http://example.com", "http://example.com/"},
		{"HTTP://Example.COM:80/r%20v/X", "http://example.com/r%20v/X"},
		{"https://LTI.example.com:443/lti/v1/launch", "https://lti.example.com/lti/v1/launch"},
		{"https://lti.example.com:80/launch", "https://lti.example.com:80/launch"},
		{"http://127.0.0.1:8080/lti/v1/launch", "http://127.0.0.1:8080/lti/v1/launch"},
		{"http://[::1]:8080/x", "http://[::1]:8080/x"},
		{"http://[::1]:80/x", "http://[::1]/x"},
	} {
		got, err := oauth1.BaseURI(tc.in)
		if err != nil || got != tc.want {
			t.Errorf("BaseURI(%q) = %q, %v; want %q", tc.in, got, err, tc.want)
		}
	}
	for _, in := range []string{"", "/lti/v1/launch", "ftp://example.com/", "http://example.com/?a=1",
		"http://example.com/?", "http://example.com/#f", "http://u:p@example.com/", "http://:80/", "mailto:a@b"} {
		if got, err := oauth1.BaseURI(in); !errors.Is(err, oauth1.ErrBadURL) {
			t.Errorf("BaseURI(%q) = %q, %v; want ErrBadURL", in, got, err)
		}
	}
}

func TestParseForm(t *testing.T) {
	got, err := oauth1.ParseForm("a=1&&b=x+y%2Bz&a=2&c&=v&d=", 0)
	if err != nil {
		t.Fatal(err)
	}
	want := []oauth1.Param{{"a", "1"}, {"b", "x y+z"}, {"a", "2"}, {"c", ""}, {"", "v"}, {"d", ""}}
	if !slices.Equal(got, want) {
		t.Fatalf("ParseForm = %q, want %q", got, want)
	}
	for _, in := range []string{"a=%", "a=%zz", "%g=1"} {
		if _, err := oauth1.ParseForm(in, 0); !errors.Is(err, oauth1.ErrBadForm) {
			t.Errorf("ParseForm(%q) = %v, want ErrBadForm", in, err)
		}
	}
	if _, err := oauth1.ParseForm("a&b&c", 2); !errors.Is(err, oauth1.ErrBadForm) {
		t.Errorf("ParseForm over the bound = %v, want ErrBadForm", err)
	}
	if got, err := oauth1.ParseForm("a&b", 2); err != nil || len(got) != 2 {
		t.Errorf("ParseForm at the bound = %q, %v", got, err)
	}
}

// signed returns params signed with secret, as a consumer would send them.
func signed(t *testing.T, method, rawURL string, params []oauth1.Param, secret string) []oauth1.Param {
	t.Helper()
	base, err := oauth1.BaseString(method, rawURL, params)
	if err != nil {
		t.Fatal(err)
	}
	sigMethod, _ := oauth1.Single(params, oauth1.ParamSignatureMethod)
	sig, err := oauth1.Sign(sigMethod, base, secret, "")
	if err != nil {
		t.Fatal(err)
	}
	return append(slices.Clone(params), oauth1.Param{Name: oauth1.ParamSignature, Value: sig})
}

func TestVerify(t *testing.T) {
	const url = "https://lti.example.com/lti/v1/launch"
	launch := []oauth1.Param{{"oauth_consumer_key", "k"}, {"oauth_signature_method", "HMAC-SHA256"}, {"a", "1"}, {"a", "1"}}
	good := signed(t, "POST", url, launch, "s&cret")
	if err := oauth1.Verify("POST", url, good, "s&cret"); err != nil {
		t.Fatalf("Verify: %v", err)
	}
	// The configured URL is normalized the same way however it is spelled.
	if err := oauth1.Verify("post", "HTTPS://LTI.example.com:443/lti/v1/launch", good, "s&cret"); err != nil {
		t.Fatalf("Verify with an equivalent URL: %v", err)
	}
	// The order parameters arrive in does not matter.
	rev := slices.Clone(good)
	slices.Reverse(rev)
	if err := oauth1.Verify("POST", url, rev, "s&cret"); err != nil {
		t.Fatalf("Verify reordered: %v", err)
	}
	with := func(f func([]oauth1.Param) []oauth1.Param) []oauth1.Param { return f(slices.Clone(good)) }
	for name, tc := range map[string]struct {
		method, url, secret string
		params              []oauth1.Param
		want                error
	}{
		"wrong secret":           {"POST", url, "secret", good, oauth1.ErrSignatureMismatch},
		"other method":           {"GET", url, "s&cret", good, oauth1.ErrSignatureMismatch},
		"other url":              {"POST", "https://lti.example.com/lti/v1/launch2", "s&cret", good, oauth1.ErrSignatureMismatch},
		"tampered value":         {"POST", url, "s&cret", with(func(p []oauth1.Param) []oauth1.Param { p[2].Value = "2"; return p }), oauth1.ErrSignatureMismatch},
		"one duplicate dropped":  {"POST", url, "s&cret", with(func(p []oauth1.Param) []oauth1.Param { return slices.Delete(p, 3, 4) }), oauth1.ErrSignatureMismatch},
		"parameter added":        {"POST", url, "s&cret", append(slices.Clone(good), oauth1.Param{"b", ""}), oauth1.ErrSignatureMismatch},
		"signature not base64":   {"POST", url, "s&cret", with(func(p []oauth1.Param) []oauth1.Param { p[4].Value = "%%%"; return p }), oauth1.ErrSignatureMismatch},
		"signature missing":      {"POST", url, "s&cret", good[:4], oauth1.ErrMissingSignature},
		"signature twice":        {"POST", url, "s&cret", append(slices.Clone(good), good[4]), oauth1.ErrDuplicate},
		"method twice":           {"POST", url, "s&cret", append(slices.Clone(good), good[1]), oauth1.ErrDuplicate},
		"method unsupported":     {"POST", url, "s&cret", with(func(p []oauth1.Param) []oauth1.Param { p[1].Value = "PLAINTEXT"; return p }), oauth1.ErrUnsupportedMethod},
		"method missing":         {"POST", url, "s&cret", with(func(p []oauth1.Param) []oauth1.Param { return slices.Delete(p, 1, 2) }), oauth1.ErrUnsupportedMethod},
		"method name lower-case": {"POST", url, "s&cret", with(func(p []oauth1.Param) []oauth1.Param { p[1].Value = "hmac-sha256"; return p }), oauth1.ErrUnsupportedMethod},
		"url with a query":       {"POST", url + "?a=1", "s&cret", good, oauth1.ErrBadURL},
	} {
		if err := oauth1.Verify(tc.method, tc.url, tc.params, tc.secret); !errors.Is(err, tc.want) {
			t.Errorf("%s: Verify = %v, want %v", name, err, tc.want)
		}
	}
}
