package domain

import (
	"errors"
	"fmt"
	"net"
	"net/netip"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/liveproctor/workspaces/pkg/outbound"
)

// The URLs a registration stores are the platform URLs the service calls
// later (a platform's keys, its token endpoint) or sends browsers to (its
// login endpoint): they follow the outbound rule, pkg/outbound's Policy
// (https on public addresses, but for the host:port entries of
// LTI_ALLOW_INSECURE_HOSTS, which tests' platforms on loopback use). The
// same Policy checks them again when they are called.
//
// What a URL says is checked when it is stored: its shape, its scheme, and
// a host given as an IP literal (or localhost). A name's addresses are not:
// DNS may answer otherwise tomorrow, so they are checked when a call
// connects (pkg/outbound's dialer refuses a non-public address, per call).

// URLPolicy is the outbound rule URLs are stored under.
type URLPolicy = outbound.Policy

// MaxURLBytes bounds a stored URL.
const MaxURLBytes = outbound.MaxURLLen

// URLPattern is what a stored URL looks like (the OpenAPI document states it
// for every URL field of a registration): http or https, a host (a DNS name
// whose last label starts with a letter, a dotted IPv4 address, or a
// bracketed IPv6 one), a port without a leading zero, then a path or query in
// printable ASCII without a fragment. The rest of the rule (https, public
// hosts, a name of at most 253 bytes, an address that parses, a port up to
// 65535) the document states in prose.
const URLPattern = `^https?://(([A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?\.)*[A-Za-z]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?\.?|((25[0-5]|2[0-4][0-9]|1[0-9]{2}|[1-9]?[0-9])\.){3}(25[0-5]|2[0-4][0-9]|1[0-9]{2}|[1-9]?[0-9])|\[[0-9A-Fa-f.]*:[0-9A-Fa-f:.]*(%25[0-9A-Za-z._~-]+)?\])(:[1-9][0-9]{0,4})?([/?][!-"$-~]*)?$`

// IssuerPattern is URLPattern without a query: an LTI 1.3 issuer is an https
// URL with no query or fragment components.
const IssuerPattern = `^https?://(([A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?\.)*[A-Za-z]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?\.?|((25[0-5]|2[0-4][0-9]|1[0-9]{2}|[1-9]?[0-9])\.){3}(25[0-5]|2[0-4][0-9]|1[0-9]{2}|[1-9]?[0-9])|\[[0-9A-Fa-f.]*:[0-9A-Fa-f:.]*(%25[0-9A-Za-z._~-]+)?\])(:[1-9][0-9]{0,4})?(/[!-"$->@-~]*)?$`

var (
	urlShape    = regexp.MustCompile(URLPattern)
	issuerShape = regexp.MustCompile(IssuerPattern)
)

// PublicURLRule starts the description of every refusal of a URL that has
// the published shape (URLPattern) but breaks the rest of the rule: the
// document quotes it.
const PublicURLRule = "must be a public https URL"

// checkURL checks raw against the rule, as an issuer when issuer is set,
// and returns what is wrong with it ("" when nothing).
func checkURL(policy URLPolicy, raw string, issuer bool) string {
	shape, shapeRule := urlShape, "must be an absolute http(s) URL in printable ASCII, on a host name or address, without user information or a fragment"
	if issuer {
		shape, shapeRule = issuerShape, "must be an https URL on a host name or address, without user information, a query or a fragment"
	}
	switch {
	case raw == "":
		return "is required"
	case len(raw) > MaxURLBytes:
		return fmt.Sprintf("must be at most %d bytes", MaxURLBytes)
	case !shape.MatchString(raw):
		return shapeRule
	}
	u, err := policy.CheckURL(raw)
	switch {
	case errors.Is(err, outbound.ErrNotHTTPS):
		return PublicURLRule + ": http is allowed only for hosts named in LTI_ALLOW_INSECURE_HOSTS"
	case errors.Is(err, outbound.ErrNotPublic):
		return PublicURLRule + ": the host is localhost, or a loopback, private, link-local or other non-public address"
	case err != nil:
		return PublicURLRule + ": it does not parse as a URL"
	}
	// Beyond the outbound rule: a port that exists, and a host that reads
	// the same to every resolver.
	if port := u.Port(); port != "" && !validPort(port) {
		return PublicURLRule + ": the port must be 1 to 65535"
	}
	host := strings.TrimSuffix(strings.ToLower(u.Hostname()), ".")
	if _, err := netip.ParseAddr(host); err == nil {
		return ""
	}
	if !validHostName(host) {
		return PublicURLRule + ": the host is not a valid name or address"
	}
	// pkg/outbound's check of the form takes "localhost." (its dialer
	// refuses where it resolves to); a stored URL names no local host.
	if (host == "localhost" || strings.HasSuffix(host, ".localhost")) && !named(policy, u) {
		return PublicURLRule + ": the host is localhost, or a loopback, private, link-local or other non-public address"
	}
	return ""
}

// named reports whether u's host:port is one of the policy's insecure hosts.
func named(policy URLPolicy, u *url.URL) bool {
	port := u.Port()
	if port == "" {
		port = map[string]string{"http": "80", "https": "443"}[u.Scheme]
	}
	return slices.Contains(policy.InsecureHosts, strings.ToLower(net.JoinHostPort(u.Hostname(), port)))
}

// validHostName reports whether name is a DNS name: labels of letters,
// digits and hyphens, 1 to 63 bytes each, 253 in all, the last one not
// starting with a digit (so "127.1" or "0x7f000001", which some resolvers
// read as addresses, are refused: no top-level domain starts with a digit).
func validHostName(name string) bool {
	if name == "" || len(name) > 253 {
		return false
	}
	labels := strings.Split(name, ".")
	for _, l := range labels {
		if l == "" || len(l) > 63 || l[0] == '-' || l[len(l)-1] == '-' {
			return false
		}
		for i := 0; i < len(l); i++ {
			c := l[i]
			if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-') {
				return false
			}
		}
	}
	last := labels[len(labels)-1]
	return last[0] < '0' || last[0] > '9'
}

func validPort(port string) bool {
	n, err := strconv.Atoi(port)
	return err == nil && n >= 1 && n <= 65535 && port[0] != '0' && port[0] != '+'
}
