package oauth1_test

import (
	"errors"
	"net/url"
	"slices"
	"strings"
	"testing"

	"github.com/liveproctor/workspaces/pkg/oauth1"
)

// FuzzBaseString decodes a query and a form body as a launch arrives and
// checks, for whatever decodes:
//   - re-encoding the parameters and decoding them again gives them back;
//   - the base string has three parts, only unreserved bytes, '%XX' and the
//     two separating '&'s, and its parts decode to the method, the base URI
//     and the normalized parameters;
//   - it depends neither on the parameters' order nor on oauth_signature;
//   - a launch signed over it verifies, and fails with another secret.
//
// Anything that does not decode is ErrBadForm.
func FuzzBaseString(f *testing.F) {
	f.Add("b5=%3D%253D&a3=a&c%40=&a2=r%20b", "c2&a3=2+q", "j49sk3j29djd")
	f.Add("foo=123&foo=bar", "resource_link_id=rsc1&oauth_signature=x&lti_version=LTI-1p0", "secret")
	f.Add("", "a=%", "")
	f.Add("&&=&%C3%A9=%E4%B8%AD", "x=+%2B+&y=%00%ff", "s p&c")
	f.Fuzz(func(t *testing.T, query, body, secret string) {
		q, errQ := oauth1.ParseForm(query, 0)
		b, errB := oauth1.ParseForm(body, 0)
		if err := errors.Join(errQ, errB); err != nil {
			if !errors.Is(err, oauth1.ErrBadForm) {
				t.Fatalf("ParseForm error %v is not ErrBadForm", err)
			}
			return
		}
		params := append(q, b...)
		var enc []string
		for _, p := range params {
			enc = append(enc, url.QueryEscape(p.Name)+"="+url.QueryEscape(p.Value))
		}
		again, err := oauth1.ParseForm(strings.Join(enc, "&"), 0)
		if err != nil || !slices.Equal(again, params) {
			t.Fatalf("round trip: %q, %v; want %q", again, err, params)
		}

		const target = "https://lti.example.com/lti/v1/launch"
		base, err := oauth1.BaseString("post", target, params)
		if err != nil {
			t.Fatal(err)
		}
		parts := strings.Split(base, "&")
		if len(parts) != 3 {
			t.Fatalf("base string has %d parts: %q", len(parts), base)
		}
		for i := 0; i < len(base); i++ {
			c := base[i]
			if c == '%' {
				if i+2 >= len(base) || !upperHex(base[i+1]) || !upperHex(base[i+2]) {
					t.Fatalf("bad escape at %d of %q", i, base)
				}
				continue
			}
			if !(c == '&' || c == '-' || c == '.' || c == '_' || c == '~' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9') {
				t.Fatalf("byte %q at %d of %q", c, i, base)
			}
		}
		decoded := make([]string, 3)
		for i, p := range parts {
			if decoded[i], err = url.PathUnescape(p); err != nil {
				t.Fatal(err)
			}
		}
		if decoded[0] != "POST" || decoded[1] != target || decoded[2] != oauth1.NormalizeParams(params) {
			t.Fatalf("base string parts decode to %q", decoded)
		}

		shuffled := slices.Clone(params)
		slices.Reverse(shuffled)
		shuffled = append(shuffled, oauth1.Param{Name: oauth1.ParamSignature, Value: query})
		if other, _ := oauth1.BaseString("POST", target, shuffled); other != base {
			t.Fatalf("reordered, with a signature: %q, want %q", other, base)
		}

		if _, err := oauth1.Single(params, oauth1.ParamSignature); err != nil {
			return // a duplicated signature is refused; nothing to sign
		}
		unsigned := slices.DeleteFunc(slices.Clone(params), func(p oauth1.Param) bool {
			return p.Name == oauth1.ParamSignature || p.Name == oauth1.ParamSignatureMethod
		})
		unsigned = append(unsigned, oauth1.Param{Name: oauth1.ParamSignatureMethod, Value: oauth1.HMACSHA1})
		launch := signed(t, "POST", target, unsigned, secret)
		if err := oauth1.Verify("POST", target, launch, secret); err != nil {
			t.Fatalf("Verify of a signed launch: %v", err)
		}
		if err := oauth1.Verify("POST", target, launch, secret+"x"); !errors.Is(err, oauth1.ErrSignatureMismatch) {
			t.Fatalf("Verify with another secret: %v", err)
		}
	})
}

func upperHex(c byte) bool { return '0' <= c && c <= '9' || 'A' <= c && c <= 'F' }
