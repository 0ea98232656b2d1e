package oauth1_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/url"
	"strings"
	"testing"

	dghubble "github.com/dghubble/oauth1"

	"github.com/liveproctor/workspaces/pkg/oauth1"
)

// An independent signer: github.com/dghubble/oauth1 (a test-only
// dependency) signs random launches, which Verify must accept, and which it
// must refuse once tampered with.

// captured is a transport that keeps the request it is given, so the signer
// runs without a network.
type captured struct{ req *http.Request }

func (c *captured) RoundTrip(r *http.Request) (*http.Response, error) {
	c.req = r
	return &http.Response{StatusCode: http.StatusNoContent, Body: http.NoBody, Request: r}, nil
}

// signWithDghubble sends a form POST of body to target through a
// dghubble/oauth1 client and returns every parameter of the request as a
// provider receives it: query, form body, then the Authorization header's
// protocol parameters (oauth_token is empty: the library always sends one).
func signWithDghubble(t *testing.T, target string, body url.Values, key, secret string, sha256 bool) []oauth1.Param {
	t.Helper()
	cfg := dghubble.NewConfig(key, secret)
	if sha256 {
		cfg.Signer = &dghubble.HMAC256Signer{ConsumerSecret: secret}
	}
	tr := &captured{}
	ctx := context.WithValue(context.Background(), dghubble.HTTPClient, &http.Client{Transport: tr})
	client := cfg.Client(ctx, dghubble.NewToken("", ""))
	resp, err := client.Post(target, "application/x-www-form-urlencoded", strings.NewReader(body.Encode()))
	if err != nil {
		t.Fatal(err)
	}
	_ = resp.Body.Close()
	return received(t, tr.req)
}

// received decodes the request's parameters as the gateway would.
func received(t *testing.T, r *http.Request) []oauth1.Param {
	t.Helper()
	params, err := oauth1.ParseForm(r.URL.RawQuery, 0)
	if err != nil {
		t.Fatal(err)
	}
	b, err := io.ReadAll(r.Body)
	if err != nil {
		t.Fatal(err)
	}
	form, err := oauth1.ParseForm(string(b), 0)
	if err != nil {
		t.Fatal(err)
	}
	params = append(params, form...)
	header, ok := strings.CutPrefix(r.Header.Get("Authorization"), "OAuth ")
	if !ok {
		t.Fatalf("no OAuth Authorization header: %q", r.Header.Get("Authorization"))
	}
	for pair := range strings.SplitSeq(header, ", ") {
		name, quoted, _ := strings.Cut(pair, "=")
		n, err1 := url.PathUnescape(name)
		v, err2 := url.PathUnescape(strings.Trim(quoted, `"`))
		if err := errors.Join(err1, err2); err != nil {
			t.Fatal(err)
		}
		params = append(params, oauth1.Param{Name: n, Value: v})
	}
	return params
}

// randomText mixes what a form and a base string must each encode: spaces,
// '+', '&', '=', '%', quotes, non-ASCII letters.
func randomText(r *rand.Rand) string {
	const alphabet = "aZ09-._~ +&=%\"',;:/?#[]@!$()*é中😀\t"
	letters := []rune(alphabet)
	var b strings.Builder
	for range r.IntN(24) {
		b.WriteRune(letters[r.IntN(len(letters))])
	}
	return b.String()
}

func TestCrossCheckWithDghubble(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for i := range 200 {
		// dghubble/oauth1 keeps one value per name, so names are unique here;
		// duplicates are covered by the published vectors.
		body := url.Values{}
		body.Set("lti_message_type", "basic-lti-launch-request")
		body.Set("resource_link_id", randomText(r))
		for j := range r.IntN(12) {
			body.Set(fmt.Sprintf("custom_%d_%s", j, randomText(r)), randomText(r))
		}
		query := ""
		if i%3 == 0 {
			query = "?workspace=" + url.QueryEscape(randomText(r))
		}
		secret := randomText(r) + "x"
		sha256 := i%2 == 1
		// The signer sees the URL as the LMS posts it; the provider verifies
		// against its configured URL, spelled differently but the same.
		params := signWithDghubble(t, "https://lti.example.com/lti/v1/launch"+query, body, "consumer-"+fmt.Sprint(i), secret, sha256)
		const configured = "HTTPS://LTI.Example.com:443/lti/v1/launch"
		if err := oauth1.Verify("POST", configured, params, secret); err != nil {
			t.Fatalf("launch %d (HMAC-SHA256 %v): Verify = %v\nparams %q", i, sha256, err, params)
		}
		if err := oauth1.Verify("POST", configured, params, secret+"x"); !errors.Is(err, oauth1.ErrSignatureMismatch) {
			t.Fatalf("launch %d with a wrong secret: Verify = %v", i, err)
		}
		// Tamper with one parameter, other than the signature.
		k := r.IntN(len(params))
		for params[k].Name == oauth1.ParamSignature {
			k = r.IntN(len(params))
		}
		tampered := append([]oauth1.Param(nil), params...)
		tampered[k].Value += "1"
		if err := oauth1.Verify("POST", configured, tampered, secret); err == nil {
			t.Fatalf("launch %d tampered at %q: Verify accepted it", i, params[k].Name)
		}
	}
}
