package outbound_test

import (
	"strings"
	"testing"

	"github.com/liveproctor/workspaces/pkg/outbound"
)

func TestStoredURLProblem(t *testing.T) {
	policy, err := outbound.ParsePolicy("127.0.0.1:8443,Platform.Test:80,[::1]:9000")
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		url  string
		want string // a prefix of the refusal; "" accepted
	}{
		{"https://canvas.instructure.com/api/lti/security/jwks", ""},
		{"https://sso.canvaslms.com:443/api/lti/security/jwks?x=1", ""},
		{"https://8.8.8.8/jwks", ""},
		{"https://[2001:4860:4860::8888]/jwks", ""},
		{"https://example.com.", ""},
		// The exempt hosts, over http and on loopback, at their port only.
		{"http://127.0.0.1:8443/jwks", ""},
		{"https://127.0.0.1:8443/jwks", ""},
		{"http://platform.test/jwks", ""},
		{"http://[::1]:9000/jwks", ""},
		{"http://127.0.0.1:8444/jwks", "must be a public https URL: http is allowed only"},
		{"https://127.0.0.1:8444/jwks", "must be a public https URL: the host is localhost, or a loopback"},
		{"http://platform.test:8080/jwks", "must be a public https URL: http is allowed only"},
		// Not https, not public.
		{"http://canvas.instructure.com/jwks", "must be a public https URL: http is allowed only"},
		{"https://10.1.2.3/jwks", "must be a public https URL: the host is localhost, or a loopback"},
		{"https://192.168.0.1/jwks", "must be a public https URL: the host is localhost, or a loopback"},
		{"https://169.254.169.254/latest/meta-data", "must be a public https URL: the host is localhost, or a loopback"},
		{"https://0.0.0.0/", "must be a public https URL: the host is localhost, or a loopback"},
		{"https://224.0.0.1/", "must be a public https URL: the host is localhost, or a loopback"},
		{"https://[::1]/", "must be a public https URL: the host is localhost, or a loopback"},
		{"https://[::ffff:127.0.0.1]/", "must be a public https URL: the host is localhost, or a loopback"},
		{"https://[fe80::1%25eth0]/", "must be a public https URL: the host is localhost, or a loopback"},
		{"https://[fd00::1]/", "must be a public https URL: the host is localhost, or a loopback"},
		{"https://localhost/jwks", "must be a public https URL: the host is localhost, or a loopback"},
		{"https://LOCALHOST./jwks", "must be a public https URL: the host is localhost, or a loopback"},
		{"https://a.localhost/jwks", "must be a public https URL: the host is localhost, or a loopback"},
		// What the published pattern takes but the service does not.
		{"https://" + strings.Repeat("a.", 127) + "com/", "must be a public https URL: the host is not a valid"},
		{"https://[1::2::3]/", "must be a public https URL: it does not parse"},
		{"https://a.com:65536/", "must be a public https URL: the port must be"},
		{"https://a.com/%zz", "must be a public https URL: it does not parse"},
		{"https://100.64.0.1/", "must be a public https URL: the host is localhost, or a loopback"},
		// What the published pattern refuses.
		{"", "is required"},
		{"ftp://a.com/", "must be an absolute http(s) URL"},
		{"HTTPS://a.com/", "must be an absolute http(s) URL"},
		{"https://user:pw@a.com/", "must be an absolute http(s) URL"},
		{"https://a.com/#frag", "must be an absolute http(s) URL"},
		{"https://a.com/a b", "must be an absolute http(s) URL"},
		{"https://a.com/é", "must be an absolute http(s) URL"},
		{"https:///path", "must be an absolute http(s) URL"},
		// Hosts some resolvers read as addresses, and malformed ones.
		{"https://127.1/", "must be an absolute http(s) URL"},
		{"https://0x7f000001/", "must be an absolute http(s) URL"},
		{"https://2130706433/", "must be an absolute http(s) URL"},
		{"https://256.1.1.1/", "must be an absolute http(s) URL"},
		{"https://exa_mple.com/", "must be an absolute http(s) URL"},
		{"https://-a.com/", "must be an absolute http(s) URL"},
		{"https://a.com:0/", "must be an absolute http(s) URL"},
		{"https://a.com:/", "must be an absolute http(s) URL"},
		{"https://a.com:08443/", "must be an absolute http(s) URL"},
		{"https://[x]/", "must be an absolute http(s) URL"},
		{"https://:::/", "must be an absolute http(s) URL"},
		{"https://a.com/" + strings.Repeat("a", 2048), "must be at most 2048 bytes"},
	}
	for _, c := range cases {
		got := policy.StoredURLProblem(c.url, outbound.AnyURL, "X_ALLOW_INSECURE_HOSTS")
		if c.want == "" && got != "" || !strings.HasPrefix(got, c.want) {
			t.Errorf("%q: %q, want %q", c.url, got, c.want)
		}
	}
	// Without exemptions, loopback is refused at every port.
	if got := (outbound.Policy{}).StoredURLProblem("http://127.0.0.1:8443/jwks", outbound.AnyURL, "X"); !strings.HasPrefix(got, outbound.PublicURLRule) {
		t.Errorf("no exemptions: %q", got)
	}
}

// The refusal of http names the setting that would allow it; the form
// without a query refuses one.
func TestStoredURLProblemNamesTheSettingAndTheForm(t *testing.T) {
	if got, want := (outbound.Policy{}).StoredURLProblem("http://a.test/", outbound.AnyURL, "WEBHOOK_ALLOW_INSECURE_HOSTS"),
		outbound.PublicURLRule+": http is allowed only for hosts named in WEBHOOK_ALLOW_INSECURE_HOSTS"; got != want {
		t.Errorf("http: %q, want %q", got, want)
	}
	for raw, want := range map[string]string{
		"https://a.test/x?q=1": "must be an https URL on a host name or address, without user information, a query or a fragment",
		"https://a.test/x":     "",
	} {
		if got := (outbound.Policy{}).StoredURLProblem(raw, outbound.URLWithoutQuery, "X"); got != want {
			t.Errorf("%q without a query: %q, want %q", raw, got, want)
		}
	}
	if got := (outbound.Policy{}).StoredURLProblem("https://a.test/x?q=1", outbound.AnyURL, "X"); got != "" {
		t.Errorf("a query: %q", got)
	}
}
