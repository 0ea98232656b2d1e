// Package outbound is how the services call URLs that callers gave them
// (an LMS's JWKS, its Dynamic Registration endpoints, a webhook receiver):
// only https, only public addresses (IPv6 ones that embed a non-public
// IPv4 address included), with a timeout and a cap on what is read.
//
// A platform URL is chosen by whoever registers a platform (a webhook's by
// whoever adds the endpoint), so a careless or hostile one could point the
// service at itself, at the cluster's private network or at a cloud's
// metadata address (169.254.169.254). The URL's form is checked when it is
// stored (StoredURLProblem) and again when it is called (CheckURL), and the
// address a host name resolves to is checked when the connection is made,
// so a name that resolves to a private address is refused too (DNS
// rebinding included). Redirects are not followed: a platform's endpoints
// are the URLs it registered.
//
// Tests run platforms and receivers on loopback over http: the hosts they
// use are named, as host:port, in Policy.InsecureHosts
// (LTI_ALLOW_INSECURE_HOSTS, WEBHOOK_ALLOW_INSECURE_HOSTS).
//
// The wait an answer asks for with Retry-After is read here too
// (ParseRetryAfter), once for every caller that honours one.
package outbound

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strings"
	"syscall"
	"time"
)

// Policy is what outbound calls may reach.
type Policy struct {
	// InsecureHosts are host:port pairs that may be called over http and
	// on any address, for tests; empty in production.
	InsecureHosts []string
}

// ParsePolicy reads a comma-separated list of host:port pairs (the
// LTI_ALLOW_INSECURE_HOSTS setting).
func ParsePolicy(list string) (Policy, error) {
	var p Policy
	for item := range strings.SplitSeq(list, ",") {
		item = strings.TrimSpace(item)
		if item == "" {
			continue
		}
		host, port, err := net.SplitHostPort(item)
		if err != nil || host == "" || port == "" {
			return Policy{}, fmt.Errorf("%q is not host:port", item)
		}
		p.InsecureHosts = append(p.InsecureHosts, strings.ToLower(item))
	}
	return p, nil
}

// insecure reports whether hostport (host:port, lower case) is named.
func (p Policy) insecure(hostport string) bool {
	for _, h := range p.InsecureHosts {
		if h == hostport {
			return true
		}
	}
	return false
}

// MaxURLLen bounds a platform URL.
const MaxURLLen = 2048

// Errors of CheckURL, for callers that name the problem.
var (
	ErrNotHTTPS   = errors.New("must be an https URL")
	ErrNotPublic  = errors.New("must name a public host, not a loopback, private or link-local address")
	ErrMalformed  = errors.New("must be an absolute URL with a host, and no user name, password or fragment")
	ErrURLTooLong = fmt.Errorf("must be at most %d bytes", MaxURLLen)
)

// CheckURL checks a platform URL's form: absolute, https (or a named
// insecure host), no credentials or fragment, and not a literal address or
// name that is plainly private. Where a name resolves to is checked when it
// is called.
func (p Policy) CheckURL(raw string) (*url.URL, error) {
	if len(raw) > MaxURLLen {
		return nil, ErrURLTooLong
	}
	u, err := url.Parse(raw)
	if err != nil || !u.IsAbs() || u.Host == "" || u.Hostname() == "" || u.User != nil || u.Fragment != "" || u.Opaque != "" {
		return nil, ErrMalformed
	}
	if p.insecure(HostPort(u)) {
		if u.Scheme != "https" && u.Scheme != "http" {
			return nil, ErrNotHTTPS
		}
		return u, nil
	}
	if u.Scheme != "https" {
		return nil, ErrNotHTTPS
	}
	host := strings.TrimSuffix(strings.ToLower(u.Hostname()), ".") // "localhost." is localhost
	if host == "localhost" || strings.HasSuffix(host, ".localhost") {
		return nil, ErrNotPublic
	}
	if ip, err := netip.ParseAddr(host); err == nil && !Public(ip) {
		return nil, ErrNotPublic
	}
	return u, nil
}

// HostPort is u's host and port, lower case, the scheme's default port
// spelt out: how the rule names a host (LTI_ALLOW_INSECURE_HOSTS), and how
// two URLs are compared for being on one host.
func HostPort(u *url.URL) string {
	port := u.Port()
	if port == "" {
		port = map[string]string{"http": "80", "https": "443"}[u.Scheme]
	}
	return strings.ToLower(net.JoinHostPort(u.Hostname(), port))
}

// Public reports whether ip is an address a platform may have: not
// loopback, private (RFC 1918, RFC 4193), link-local, shared (RFC 6598),
// unspecified, multicast, or otherwise reserved for local use; and not an
// IPv6 address that reaches one of those through a translator or a tunnel
// (NAT64, IPv4-compatible, 6to4, Teredo).
func Public(ip netip.Addr) bool {
	ip = ip.Unmap() // ::ffff:a.b.c.d is a.b.c.d to the dialer
	switch {
	case !ip.IsValid(), ip.IsLoopback(), ip.IsPrivate(), ip.IsLinkLocalUnicast(), ip.IsLinkLocalMulticast(),
		ip.IsInterfaceLocalMulticast(), ip.IsMulticast(), ip.IsUnspecified():
		return false
	}
	for _, p := range reserved {
		if p.Contains(ip) {
			return false
		}
	}
	if nat64.Contains(ip) {
		b := ip.As16()
		return Public(netip.AddrFrom4([4]byte(b[12:])))
	}
	return true
}

// nat64 is the well-known NAT64 prefix (RFC 6052): a translator on the
// path turns 64:ff9b::a.b.c.d into a.b.c.d, so such an address is as
// public as the IPv4 address in its last 32 bits. It is the one prefix
// embedding IPv4 that is not refused whole: an IPv6-only cluster reaches
// an IPv4-only platform through it.
var nat64 = netip.MustParsePrefix("64:ff9b::/96")

// reserved are further ranges no platform is on. The IPv6 prefixes that
// embed an IPv4 address, but for nat64, are refused whole: decoding the
// IPv4 address out of them would keep alive forms no platform uses, each
// with its own layout.
var reserved = []netip.Prefix{
	netip.MustParsePrefix("0.0.0.0/8"),       // "this network"
	netip.MustParsePrefix("100.64.0.0/10"),   // shared address space (carrier NAT)
	netip.MustParsePrefix("192.0.0.0/24"),    // IETF protocol assignments
	netip.MustParsePrefix("198.18.0.0/15"),   // benchmarking
	netip.MustParsePrefix("240.0.0.0/4"),     // reserved, and broadcast
	netip.MustParsePrefix("2001:db8::/32"),   // documentation
	netip.MustParsePrefix("fec0::/10"),       // deprecated site-local
	netip.MustParsePrefix("100::/64"),        // discard-only
	netip.MustParsePrefix("2001:10::/28"),    // deprecated ORCHID
	netip.MustParsePrefix("192.88.99.0/24"),  // 6to4 relay anycast (deprecated)
	netip.MustParsePrefix("198.51.100.0/24"), // documentation
	netip.MustParsePrefix("203.0.113.0/24"),  // documentation
	netip.MustParsePrefix("192.0.2.0/24"),    // documentation

	// Local-use IPv4/IPv6 translation (RFC 8215): each network picks the
	// prefix length inside it, so where the IPv4 address sits is not
	// fixed, and it translates to whatever that network reaches.
	netip.MustParsePrefix("64:ff9b:1::/48"),
	// IPv4-compatible addresses, ::a.b.c.d (deprecated by RFC 4291): no
	// host has one, and a stack that still honours them reaches a.b.c.d.
	netip.MustParsePrefix("::/96"),
	// SIIT's IPv4-translated addresses, ::ffff:0:a.b.c.d (RFC 2765,
	// obsoleted): translated to a.b.c.d by the stacks that know them.
	netip.MustParsePrefix("::ffff:0:0:0/96"),
	// 6to4 (2002:AABB:CCDD::/48 for AA.BB.CC.DD, deprecated by RFC 7526):
	// reached through whichever relay answers, to the IPv4 address in bits
	// 16 to 47.
	netip.MustParsePrefix("2002::/16"),
	// Teredo (RFC 4380): a tunnel over UDP to the server's IPv4 address in
	// bits 32 to 63, and to the client's, inverted, in the last 32 bits.
	// Obsolete, and two addresses to decode: refused whole.
	netip.MustParsePrefix("2001::/32"),
}

// Client calls platform URLs under a policy.
type Client struct {
	policy Policy
	http   *http.Client
}

// NewClient returns a client whose calls each end within timeout.
func NewClient(p Policy, timeout time.Duration) *Client {
	dialer := &net.Dialer{Timeout: timeout, Control: refusePrivate}
	insecureDialer := &net.Dialer{Timeout: timeout}
	transport := &http.Transport{
		Proxy: nil, // a proxy would make the address check moot
		DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
			if p.insecure(strings.ToLower(addr)) {
				return insecureDialer.DialContext(ctx, network, addr)
			}
			return dialer.DialContext(ctx, network, addr)
		},
		TLSHandshakeTimeout:   timeout,
		ResponseHeaderTimeout: timeout,
		MaxIdleConnsPerHost:   2,
		IdleConnTimeout:       90 * time.Second,
		ForceAttemptHTTP2:     true,
	}
	return &Client{policy: p, http: &http.Client{
		Transport: transport,
		Timeout:   timeout,
		CheckRedirect: func(*http.Request, []*http.Request) error {
			return http.ErrUseLastResponse
		},
	}}
}

// ErrAddressNotPublic is the dialer's refusal of the address a host name
// resolved to. It is not ErrNotPublic, which is about what a URL says and
// so tells its author nothing new: this one tells what a name resolves to
// inside the service's network, and a caller that answers whoever gave
// the URL treats it as a host that cannot be reached.
var ErrAddressNotPublic = errors.New("the host's address is not public")

// refusePrivate is the dialer's check of the address a name resolved to.
func refusePrivate(_, address string, _ syscall.RawConn) error {
	ap, err := netip.ParseAddrPort(address)
	if err != nil {
		return fmt.Errorf("outbound: unexpected address %q", address)
	}
	if !Public(ap.Addr()) {
		return ErrAddressNotPublic
	}
	return nil
}

// Response is what a call read.
type Response struct {
	Status int
	Header http.Header
	Body   []byte
	// Truncated: the answer's body went on past Body, or broke off
	// (DoPrefix only).
	Truncated bool
}

// ErrTooLarge: the answer's body is larger than the call allows.
var ErrTooLarge = errors.New("the answer is too large")

// Do sends req (whose URL is checked first: CheckURL's errors) and reads
// at most maxBytes of the answer's body; a longer body is ErrTooLarge. A
// connection refused for its address wraps ErrAddressNotPublic.
func (c *Client) Do(req *http.Request, maxBytes int64) (Response, error) {
	resp, err := c.send(req)
	if err != nil {
		return Response{}, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxBytes+1))
	if err != nil {
		return Response{}, err
	}
	if int64(len(body)) > maxBytes {
		return Response{}, ErrTooLarge
	}
	return Response{Status: resp.StatusCode, Header: resp.Header, Body: body}, nil
}

// DoPrefix sends req as Do does, but keeps only the first maxBytes of the
// answer's body and drops the rest: for a caller that acts on an
// answer's status and records how its body began (a webhook receiver's).
// Up to drainBytes of what is dropped are read, so that the connection
// can carry the next call; past that it is closed. Once the status has
// come, the call has its answer: a body that breaks off (the timeout
// included) is kept as far as it came, and marked Truncated.
func (c *Client) DoPrefix(req *http.Request, maxBytes, drainBytes int64) (Response, error) {
	resp, err := c.send(req)
	if err != nil {
		return Response{}, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxBytes+1))
	truncated := err != nil || int64(len(body)) > maxBytes
	if err == nil && truncated {
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, drainBytes))
	}
	if int64(len(body)) > maxBytes {
		body = body[:maxBytes]
	}
	return Response{Status: resp.StatusCode, Header: resp.Header, Body: body, Truncated: truncated}, nil
}

// send checks req's URL and sends it.
func (c *Client) send(req *http.Request) (*http.Response, error) {
	if _, err := c.policy.CheckURL(req.URL.String()); err != nil {
		return nil, err
	}
	return c.http.Do(req)
}

// Get fetches rawURL with an Accept header, as Do.
func (c *Client) Get(ctx context.Context, rawURL, accept string, maxBytes int64) (Response, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, rawURL, nil)
	if err != nil {
		return Response{}, ErrMalformed
	}
	if accept != "" {
		req.Header.Set("Accept", accept)
	}
	return c.Do(req, maxBytes)
}
