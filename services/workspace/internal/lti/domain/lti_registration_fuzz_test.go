package domain_test

import (
	"net/netip"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/liveproctor/workspaces/pkg/fault"
	"github.com/liveproctor/workspaces/pkg/outbound"
	ltidomain "github.com/liveproctor/workspaces/services/workspace/internal/lti/domain"
	"github.com/liveproctor/workspaces/services/workspace/internal/lti/domain/ltidomaintest"
)

// The document's patterns, compiled apart from the checks under test.
var (
	urlDocShape    = regexp.MustCompile(outbound.URLPattern)
	issuerDocShape = regexp.MustCompile(outbound.URLWithoutQueryPattern)
)

// Whatever URLs a caller registers, CheckNewLTIRegistration answers nil or
// one Invalid error naming only the fields it got wrong; a refusal of a URL
// that has the document's shape starts "must be a public https URL" (the
// prose rule the document states); and what it accepts, under a policy
// without exempt hosts, is an https URL of the document's shape that
// pkg/outbound takes, whose host, when an address, is public.
func FuzzCheckNewRegistration(f *testing.F) {
	f.Add("https://canvas.instructure.com", "https://sso.canvaslms.com/api/lti/security/jwks")
	f.Add("http://canvas.instructure.com/", "https://127.0.0.1/jwks")
	f.Add("https://a.test/?q", "https://[::ffff:10.0.0.1]:443/")
	f.Add("https://a.test#f", "https://u@a.test/")
	f.Add("https://LOCALHOST.", "https://0x7f000001/")
	f.Add("https://a.test:99999", "https://a.test/%zz")
	f.Add("https://[fe80::1%25eth0]", "https://100.64.0.1/x")
	f.Fuzz(func(t *testing.T, issuer, jwksURL string) {
		r := ltidomaintest.ValidRegistration()
		r.Issuer, r.JWKSURL = issuer, jwksURL
		err := ltidomain.CheckNewRegistration(r, outbound.Policy{})
		if err != nil {
			e, ok := fault.As(err)
			if !ok || e.Kind != fault.Invalid || len(e.Fields) == 0 {
				t.Fatalf("%v: want one Invalid error naming fields", err)
			}
			for _, v := range e.Fields {
				value, shape := jwksURL, urlDocShape
				switch v.Field {
				case "issuer":
					value, shape = issuer, issuerDocShape
				case "jwksUrl":
				default:
					t.Fatalf("names %s, which was valid", v.Field)
				}
				if shape.MatchString(value) && len(value) <= ltidomain.MaxURLBytes && !strings.HasPrefix(v.Description, outbound.PublicURLRule) {
					t.Fatalf("%s %q has the document's shape but is refused with %q", v.Field, value, v.Description)
				}
			}
			return
		}
		for _, c := range []struct {
			value string
			shape *regexp.Regexp
		}{{issuer, issuerDocShape}, {jwksURL, urlDocShape}} {
			u, perr := url.Parse(c.value)
			if !c.shape.MatchString(c.value) || len(c.value) > ltidomain.MaxURLBytes || perr != nil || u.Scheme != "https" {
				t.Fatalf("accepted %q", c.value)
			}
			if _, oerr := (outbound.Policy{}).CheckURL(c.value); oerr != nil {
				t.Fatalf("accepted %q, which pkg/outbound refuses: %v", c.value, oerr)
			}
			if ip, aerr := netip.ParseAddr(u.Hostname()); aerr == nil && !outbound.Public(ip) {
				t.Fatalf("accepted %q, on a non-public address", c.value)
			}
		}
	})
}
