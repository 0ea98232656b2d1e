package outbound_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/liveproctor/workspaces/pkg/outbound"
)

func TestCheckURL(t *testing.T) {
	p, err := outbound.ParsePolicy(" 127.0.0.1:8443 ,Platform.Test:80")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		url  string
		want error
	}{
		{"https://canvas.instructure.com/api/lti/security/jwks", nil},
		{"https://lms.example.edu:8443/mod/lti/certs.php", nil},
		{"http://canvas.instructure.com/jwks", outbound.ErrNotHTTPS},
		{"ftp://example.com/x", outbound.ErrNotHTTPS},
		{"https://user:pw@example.com/", outbound.ErrMalformed},
		{"https://example.com/#frag", outbound.ErrMalformed},
		{"/relative", outbound.ErrMalformed},
		{"https://", outbound.ErrMalformed},
		{"https://localhost/jwks", outbound.ErrNotPublic},
		{"https://a.localhost/jwks", outbound.ErrNotPublic},
		{"https://localhost./jwks", outbound.ErrNotPublic},
		{"https://127.0.0.1/jwks", outbound.ErrNotPublic},
		{"https://169.254.169.254/latest/meta-data", outbound.ErrNotPublic},
		{"https://10.1.2.3/", outbound.ErrNotPublic},
		{"https://[::1]/", outbound.ErrNotPublic},
		{"https://[fd00::1]/", outbound.ErrNotPublic},
		{"https://[::ffff:127.0.0.1]/", outbound.ErrNotPublic},
		{"https://100.64.1.1/", outbound.ErrNotPublic},
		{"https://" + strings.Repeat("a", outbound.MaxURLLen) + ".com/", outbound.ErrURLTooLong},
		// Named insecure hosts may use http and loopback, at that port only.
		{"http://127.0.0.1:8443/jwks", nil},
		{"https://127.0.0.1:8443/jwks", nil},
		{"http://127.0.0.1:8444/jwks", outbound.ErrNotHTTPS},
		{"http://platform.test/jwks", nil},
	} {
		_, err := p.CheckURL(c.url)
		if !errors.Is(err, c.want) {
			t.Errorf("CheckURL(%.60q) = %v, want %v", c.url, err, c.want)
		}
	}
	if _, err := outbound.ParsePolicy("no-port"); err == nil {
		t.Error("ParsePolicy accepted an entry without a port")
	}
}

func TestPublic(t *testing.T) {
	for addr, want := range map[string]bool{
		"8.8.8.8": true, "2606:4700::1111": true, "151.101.1.1": true,
		"127.0.0.1": false, "10.0.0.1": false, "172.16.5.4": false, "192.168.1.1": false,
		"169.254.169.254": false, "0.0.0.0": false, "100.64.0.1": false, "224.0.0.1": false,
		"255.255.255.255": false, "::1": false, "fe80::1": false, "fc00::1": false, "::": false,
		"::ffff:10.0.0.1": false, "192.0.2.7": false, "2001:db8::1": false,
	} {
		if got := outbound.Public(netip.MustParseAddr(addr)); got != want {
			t.Errorf("Public(%s) = %v, want %v", addr, got, want)
		}
	}
}

// IPv6 addresses that reach an IPv4 address through a translator or a
// tunnel are refused when the IPv4 address is not public, both in a URL
// and at the dialer; the prefixes other than NAT64's well-known one are
// refused whole, a public IPv4 address in them too.
func TestEmbeddedIPv4(t *testing.T) {
	for _, c := range []struct {
		prefix, addr string // addr embeds the IPv4 address in its comment
		public       bool
	}{
		{"NAT64 well-known", "64:ff9b::a9fe:a9fe", false}, // 169.254.169.254
		{"NAT64 well-known", "64:ff9b::a00:5", false},     // 10.0.0.5
		{"NAT64 well-known", "64:ff9b::7f00:1", false},    // 127.0.0.1
		{"NAT64 well-known", "64:ff9b::6440:1", false},    // 100.64.0.1
		{"NAT64 well-known", "64:ff9b::808:808", true},    // 8.8.8.8
		{"NAT64 local-use", "64:ff9b:1::a00:5", false},    // 10.0.0.5
		{"NAT64 local-use", "64:ff9b:1::808:808", false},  // 8.8.8.8
		{"IPv4-compatible", "::a00:5", false},             // 10.0.0.5
		{"IPv4-compatible", "::808:808", false},           // 8.8.8.8
		{"IPv4-mapped", "::ffff:a9fe:a9fe", false},        // 169.254.169.254
		{"IPv4-mapped", "::ffff:808:808", true},           // 8.8.8.8, dialed as itself
		{"IPv4-translated", "::ffff:0:a00:5", false},      // 10.0.0.5
		{"IPv4-translated", "::ffff:0:808:808", false},    // 8.8.8.8
		{"6to4", "2002:a00:5::1", false},                  // 10.0.0.5
		{"6to4", "2002:808:808::1", false},                // 8.8.8.8
		{"Teredo", "2001:0:a00:5::f7f7:f7f7", false},      // server 10.0.0.5, client 8.8.8.8
		{"Teredo", "2001:0:808:808::f5ff:fffa", false},    // server 8.8.8.8, client 10.0.0.5
		{"Teredo", "2001:0:808:808::f7f7:f7f7", false},    // server and client 8.8.8.8
		// Their neighbours stay public.
		{"beside 6to4", "2003::1", true},
		{"beside Teredo", "2001:4860::8888", true},
	} {
		wantURL, wantDial := outbound.ErrNotPublic, outbound.ErrAddressNotPublic
		if c.public {
			wantURL, wantDial = nil, nil
		}
		if got := outbound.Public(netip.MustParseAddr(c.addr)); got != c.public {
			t.Errorf("%s: Public(%s) = %v, want %v", c.prefix, c.addr, got, c.public)
		}
		if _, err := (outbound.Policy{}).CheckURL("https://[" + c.addr + "]/jwks"); !errors.Is(err, wantURL) {
			t.Errorf("%s: CheckURL(https://[%s]/jwks) = %v, want %v", c.prefix, c.addr, err, wantURL)
		}
		if err := outbound.RefusePrivate("tcp6", "["+c.addr+"]:443", nil); !errors.Is(err, wantDial) {
			t.Errorf("%s: dial [%s]:443: %v, want %v", c.prefix, c.addr, err, wantDial)
		}
	}
}

// A platform on loopback is refused when the connection is made, unless
// its host:port is named; a named one is read up to the cap, and its
// redirects are not followed. DoPrefix keeps the start of a long answer.
func TestClientRefusesPrivateAddressesUnlessNamed(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/big":
			_, _ = w.Write([]byte(strings.Repeat("x", 2048)))
		case "/moved":
			http.Redirect(w, r, "http://169.254.169.254/latest", http.StatusFound)
		default:
			_, _ = w.Write([]byte(`{"keys":[]}`))
		}
	}))
	defer srv.Close()
	u, _ := url.Parse(srv.URL)
	ctx := context.Background()

	closed := outbound.NewClient(outbound.Policy{}, 2*time.Second)
	if _, err := closed.Get(ctx, srv.URL+"/jwks", "", 1024); !errors.Is(err, outbound.ErrNotHTTPS) {
		t.Fatalf("http to an unnamed host: %v, want ErrNotHTTPS", err)
	}

	open := outbound.NewClient(outbound.Policy{InsecureHosts: []string{u.Host}}, 2*time.Second)
	resp, err := open.Get(ctx, srv.URL+"/jwks", "application/json", 1024)
	if err != nil || resp.Status != 200 || string(resp.Body) != `{"keys":[]}` {
		t.Fatalf("named host: %+v, %v", resp, err)
	}
	if _, err := open.Get(ctx, srv.URL+"/big", "", 1024); !errors.Is(err, outbound.ErrTooLarge) {
		t.Fatalf("2 KiB over a 1 KiB cap: %v, want ErrTooLarge", err)
	}
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, srv.URL+"/big", nil)
	resp, err = open.DoPrefix(req, 1024, 4096)
	if err != nil || resp.Status != 200 || len(resp.Body) != 1024 || !resp.Truncated {
		t.Fatalf("DoPrefix of 2 KiB at 1 KiB: status %d, %d bytes, truncated %v, %v; want 200, 1024, true",
			resp.Status, len(resp.Body), resp.Truncated, err)
	}
	req, _ = http.NewRequestWithContext(ctx, http.MethodGet, srv.URL+"/jwks", nil)
	if resp, err = open.DoPrefix(req, 1024, 4096); err != nil || string(resp.Body) != `{"keys":[]}` || resp.Truncated {
		t.Fatalf("DoPrefix of a short answer: %+v, %v", resp, err)
	}
	resp, err = open.Get(ctx, srv.URL+"/moved", "", 1024)
	if err != nil || resp.Status != http.StatusFound {
		t.Fatalf("redirect: %+v, %v; want the 302 itself, not followed", resp, err)
	}
}

// The dialer's check refuses the address a name resolved to, whatever
// the URL said, so a public-looking name that resolves to a private
// address (DNS rebinding) never connects. Its refusal is not the URL's
// (ErrNotPublic), so callers can answer it as an unreachable host.
func TestDialerChecksTheResolvedAddress(t *testing.T) {
	for addr, want := range map[string]error{
		"127.0.0.1:443":      outbound.ErrAddressNotPublic,
		"169.254.169.254:80": outbound.ErrAddressNotPublic,
		"[::1]:443":          outbound.ErrAddressNotPublic,
		"[fd12::7]:443":      outbound.ErrAddressNotPublic,
		"93.184.215.14:443":  nil,
		"[2606:4700::1]:443": nil,
	} {
		err := outbound.RefusePrivate("tcp", addr, nil)
		if !errors.Is(err, want) || errors.Is(err, outbound.ErrNotPublic) {
			t.Errorf("dial %s: %v, want %v", addr, err, want)
		}
	}
}
