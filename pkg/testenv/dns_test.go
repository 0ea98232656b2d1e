package testenv

import (
	"context"
	"errors"
	"net"
	"net/netip"
	"slices"
	"testing"
	"time"
)

func startDNS(t *testing.T) *DNSServer {
	t.Helper()
	s, err := StartDNS()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := s.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return s
}

// resolver is Go's own DNS client asking only s, over the network it
// chooses (UDP, then TCP for a truncated answer) or over TCP alone.
func resolver(s *DNSServer, tcpOnly bool) *net.Resolver {
	return &net.Resolver{PreferGo: true, Dial: func(ctx context.Context, network, _ string) (net.Conn, error) {
		if tcpOnly {
			network = "tcp"
		}
		var d net.Dialer
		return d.DialContext(ctx, network, s.Addr())
	}}
}

func lookup(t *testing.T, r *net.Resolver, network, name string) ([]netip.Addr, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	addrs, err := r.LookupNetIP(ctx, network, name)
	slices.SortFunc(addrs, netip.Addr.Compare)
	return addrs, err
}

func wantAddrs(t *testing.T, r *net.Resolver, name string, want ...netip.Addr) {
	t.Helper()
	got, err := lookup(t, r, "ip4", name)
	if err != nil || !slices.Equal(got, want) {
		t.Fatalf("%s: %v, %v; want %v", name, got, err, want)
	}
}

func wantNotFound(t *testing.T, err error, what string) {
	t.Helper()
	var dnsErr *net.DNSError
	if !errors.As(err, &dnsErr) || !dnsErr.IsNotFound {
		t.Fatalf("%s: %v, want not found", what, err)
	}
}

func TestDNSAnswersTheNamesSet(t *testing.T) {
	s := startDNS(t)
	a, b, c := netip.MustParseAddr("127.0.0.2"), netip.MustParseAddr("127.0.0.3"), netip.MustParseAddr("127.0.0.4")
	s.Set("workspace.stack.test", a, b)
	for _, tcp := range []bool{false, true} {
		r := resolver(s, tcp)
		wantAddrs(t, r, "workspace.stack.test", a, b)
		wantAddrs(t, r, "Workspace.Stack.Test.", a, b) // names are not case-sensitive

		// What gRPC's resolver asks beside the addresses gets clean
		// answers: no IPv6 addresses, no service config.
		if got, err := lookup(t, r, "ip6", "workspace.stack.test"); len(got) != 0 {
			t.Fatalf("AAAA: %v, %v; want none", got, err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		_, err := r.LookupTXT(ctx, "_grpc_config.workspace.stack.test")
		cancel()
		wantNotFound(t, err, "the service config's TXT record")
		_, err = lookup(t, r, "ip4", "auth.stack.test")
		wantNotFound(t, err, "a name never set")
	}

	// A change is seen by the next query: nothing caches the answers.
	r := resolver(s, false)
	s.Set("workspace.stack.test", c, a)
	wantAddrs(t, r, "workspace.stack.test", a, c)
	s.Set("workspace.stack.test")
	_, err := lookup(t, r, "ip4", "workspace.stack.test")
	wantNotFound(t, err, "a name set to no addresses")
}

// More addresses than a UDP answer holds come truncated over UDP, and
// whole over TCP, which Go's resolver turns to.
func TestDNSManyAddressesOverTCP(t *testing.T) {
	s := startDNS(t)
	var want []netip.Addr
	for i := range 60 {
		want = append(want, netip.AddrFrom4([4]byte{127, 0, 1, byte(i + 1)}))
	}
	s.Set("many.stack.test", want...)
	wantAddrs(t, resolver(s, false), "many.stack.test", want...)
}

func TestDNSIPv6(t *testing.T) {
	s := startDNS(t)
	v6 := netip.MustParseAddr("::1")
	s.Set("both.stack.test", netip.MustParseAddr("127.0.0.2"), v6)
	got, err := lookup(t, resolver(s, false), "ip6", "both.stack.test")
	if err != nil || !slices.Equal(got, []netip.Addr{v6}) {
		t.Fatalf("AAAA: %v, %v; want %v", got, err, v6)
	}
}

func TestDNSCloseStopsAnswering(t *testing.T) {
	s, err := StartDNS()
	if err != nil {
		t.Fatal(err)
	}
	// An open TCP connection does not hold Close up.
	c, err := net.Dial("tcp", s.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	wantRefused(t, s.Addr())
}
