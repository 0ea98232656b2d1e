package outbound

import (
	"errors"
	"fmt"
	"net/netip"
	"regexp"
	"strconv"
	"strings"
)

// The rule of a URL a service stores to call later (an LTI platform's
// endpoints, a webhook endpoint): one rule, so that every stored URL is
// held to the same shape and the same policy, and every refusal reads
// alike.
//
// What a URL says is checked when it is stored: its shape, its scheme, and
// a host given as an IP literal (or localhost). A name's addresses are not:
// DNS may answer otherwise tomorrow, so they are checked when a call
// connects (the Client's dialer refuses a non-public address, per call).

// URLPattern is what a stored URL looks like (the OpenAPI document states
// it for every such field): http or https, a host (a DNS name whose last
// label starts with a letter, a dotted IPv4 address, or a bracketed IPv6
// one), a port without a leading zero, then a path or query in printable
// ASCII without a fragment. The rest of the rule (https, public hosts, a
// name of at most 253 bytes, an address that parses, a port up to 65535)
// the document states in prose.
const URLPattern = `^https?://(([A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?\.)*[A-Za-z]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?\.?|((25[0-5]|2[0-4][0-9]|1[0-9]{2}|[1-9]?[0-9])\.){3}(25[0-5]|2[0-4][0-9]|1[0-9]{2}|[1-9]?[0-9])|\[[0-9A-Fa-f.]*:[0-9A-Fa-f:.]*(%25[0-9A-Za-z._~-]+)?\])(:[1-9][0-9]{0,4})?([/?][!-"$-~]*)?$`

// URLWithoutQueryPattern is URLPattern without a query (an LTI 1.3 issuer
// is an https URL with no query or fragment components).
const URLWithoutQueryPattern = `^https?://(([A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?\.)*[A-Za-z]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?\.?|((25[0-5]|2[0-4][0-9]|1[0-9]{2}|[1-9]?[0-9])\.){3}(25[0-5]|2[0-4][0-9]|1[0-9]{2}|[1-9]?[0-9])|\[[0-9A-Fa-f.]*:[0-9A-Fa-f:.]*(%25[0-9A-Za-z._~-]+)?\])(:[1-9][0-9]{0,4})?(/[!-"$->@-~]*)?$`

// URLForm is which of the two published shapes a stored URL must have.
type URLForm int

const (
	// AnyURL: URLPattern.
	AnyURL URLForm = iota
	// URLWithoutQuery: URLWithoutQueryPattern.
	URLWithoutQuery
)

var (
	urlShape             = regexp.MustCompile(URLPattern)
	urlWithoutQueryShape = regexp.MustCompile(URLWithoutQueryPattern)
)

// PublicURLRule starts the description of every refusal of a URL that has
// the published shape but breaks the rest of the rule: the document quotes
// it.
const PublicURLRule = "must be a public https URL"

// StoredURLProblem says what is wrong with raw as a URL to store in the
// form given ("" when nothing): the published shape, then the policy
// (https on a public host, but for the policy's insecure hosts), then a
// valid host and port. setting names the setting that lists the insecure
// hosts (LTI_ALLOW_INSECURE_HOSTS, WEBHOOK_ALLOW_INSECURE_HOSTS), for the
// refusal of http.
func (p Policy) StoredURLProblem(raw string, form URLForm, setting string) string {
	shape, shapeRule := urlShape, "must be an absolute http(s) URL in printable ASCII, on a host name or address, without user information or a fragment"
	if form == URLWithoutQuery {
		shape, shapeRule = urlWithoutQueryShape, "must be an https URL on a host name or address, without user information, a query or a fragment"
	}
	switch {
	case raw == "":
		return "is required"
	case len(raw) > MaxURLLen:
		return fmt.Sprintf("must be at most %d bytes", MaxURLLen)
	case !shape.MatchString(raw):
		return shapeRule
	}
	notPublic := PublicURLRule + ": the host is localhost, or a loopback, private, link-local or other non-public address"
	u, err := p.CheckURL(raw)
	switch {
	case errors.Is(err, ErrNotHTTPS):
		return PublicURLRule + ": http is allowed only for hosts named in " + setting
	case errors.Is(err, ErrNotPublic):
		return notPublic
	case err != nil:
		return PublicURLRule + ": it does not parse as a URL"
	}
	// Beyond CheckURL: a port that exists, and a host that reads the same
	// to every resolver.
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
	// CheckURL takes "localhost." of a named host (the dialer refuses
	// where it resolves to otherwise); a stored URL names no local host.
	if (host == "localhost" || strings.HasSuffix(host, ".localhost")) && !p.insecure(HostPort(u)) {
		return notPublic
	}
	return ""
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
