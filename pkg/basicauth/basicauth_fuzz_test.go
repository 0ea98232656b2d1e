package basicauth_test

import (
	"encoding/base64"
	"strings"
	"testing"

	"github.com/liveproctor/workspaces/pkg/basicauth"
)

// Whatever the header, Parse either refuses it or returns a key pair it
// could have come from: a non-empty key without ':', a non-empty secret,
// and a header that Header writes for that pair (up to the scheme's case
// and surrounding space, which Parse tolerates).
func FuzzParse(f *testing.F) {
	for _, seed := range []string{
		"", "Basic", "Basic ", "Basic a2V5", "Basic !!!", "Bearer abc", "basic azpz", "BASIC azpz",
		"  Basic   azpz  ", "Basic azpz\n", "Basic Og==", "Basic azo=", "Basic OnM=", "Basic azpzOnQ=",
		"Basic\tazpz", "Basic azp z", "Basic azpz====", "Basic /w==", "Basic azr/",
		basicauth.Header("k1", "s:with:colons"), basicauth.Header("k", "s"), basicauth.Header("\xff", "\x00"),
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, header string) {
		key, secret, ok := basicauth.Parse(header)
		if !ok {
			if key != "" || secret != "" {
				t.Fatalf("Parse(%q) refused but returned %q, %q", header, key, secret)
			}
			return
		}
		if key == "" || secret == "" || strings.Contains(key, ":") {
			t.Fatalf("Parse(%q) accepted the key pair %q, %q", header, key, secret)
		}
		scheme, encoded, _ := strings.Cut(strings.TrimSpace(header), " ")
		if !strings.EqualFold(scheme, "Basic") {
			t.Fatalf("Parse(%q) accepted the scheme %q", header, scheme)
		}
		raw, err := base64.StdEncoding.DecodeString(strings.TrimSpace(encoded))
		if err != nil || string(raw) != key+":"+secret {
			t.Fatalf("Parse(%q) = %q, %q, which the header does not encode", header, key, secret)
		}
		if k, s, ok := basicauth.Parse(basicauth.Header(key, secret)); !ok || k != key || s != secret {
			t.Fatalf("Parse(Header(%q, %q)) = %q, %q, %v", key, secret, k, s, ok)
		}
	})
}

// Header then Parse gives back any key pair of a non-empty key without ':'
// and a non-empty secret, whatever bytes they hold; a key with ':' is not
// one (the first ':' ends the key), and an empty part is refused.
func FuzzHeaderRoundTrip(f *testing.F) {
	f.Add("k", "s")
	f.Add("0f8fad5b-d9cb-469f-a165-70867728950e", "s:with:colons")
	f.Add("k", " ")
	f.Add("\xff\x00", "é\n")
	f.Add("a:b", "s")
	f.Add("", "s")
	f.Add("k", "")
	f.Fuzz(func(t *testing.T, key, secret string) {
		if strings.Contains(key, ":") {
			return
		}
		k, s, ok := basicauth.Parse(basicauth.Header(key, secret))
		if want := key != "" && secret != ""; ok != want {
			t.Fatalf("Parse(Header(%q, %q)) ok = %v, want %v", key, secret, ok, want)
		}
		if ok && (k != key || s != secret) {
			t.Fatalf("Parse(Header(%q, %q)) = %q, %q", key, secret, k, s)
		}
	})
}
