package clientaddr_test

import (
	"context"
	"net"
	"net/http/httptest"
	"net/netip"
	"testing"

	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/peer"

	"github.com/liveproctor/workspaces/pkg/clientaddr"
)

func TestResolveBelievesOnlyTrustedHops(t *testing.T) {
	r, err := clientaddr.NewResolver([]string{"10.0.0.0/8", "127.0.0.1"})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		peer string
		xff  []string
		want string
	}{
		{"no proxy", "203.0.113.7", nil, "203.0.113.7"},
		{"untrusted peer's header is ignored", "203.0.113.7", []string{"198.51.100.1"}, "203.0.113.7"},
		{"trusted proxy reports the client", "10.1.2.3", []string{"198.51.100.1"}, "198.51.100.1"},
		{"a client's own entry left of the proxy's is ignored", "10.1.2.3", []string{"192.0.2.66, 198.51.100.1"}, "198.51.100.1"},
		{"two trusted hops", "127.0.0.1", []string{"198.51.100.1", "10.9.9.9"}, "198.51.100.1"},
		{"garbage ends the walk at the hop that wrote it", "10.1.2.3", []string{"not-an-ip"}, "10.1.2.3"},
		{"trusted peer without header", "10.1.2.3", nil, "10.1.2.3"},
		{"IPv4-mapped IPv6 peer", "::ffff:10.1.2.3", []string{"198.51.100.1"}, "198.51.100.1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := r.Resolve(netip.MustParseAddr(tt.peer), tt.xff)
			if got.String() != tt.want {
				t.Fatalf("got %s, want %s", got, tt.want)
			}
		})
	}
}

func TestZeroResolverTrustsNobody(t *testing.T) {
	var r clientaddr.Resolver
	req := httptest.NewRequest("GET", "/", nil)
	req.RemoteAddr = "127.0.0.2:5555"
	req.Header.Set("X-Forwarded-For", "198.51.100.1")
	if got := r.FromRequest(req); got.String() != "127.0.0.2" {
		t.Fatalf("got %s", got)
	}
}

func TestNewResolverRefusesGarbage(t *testing.T) {
	for _, bad := range []string{"10.0.0.0/33", "example.com", "10.0.0/8"} {
		if _, err := clientaddr.NewResolver([]string{bad}); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}

func TestFromIncomingAndForward(t *testing.T) {
	r, _ := clientaddr.NewResolver([]string{"127.0.0.0/8"})
	ctx := peer.NewContext(context.Background(), &peer.Peer{Addr: &net.TCPAddr{IP: net.ParseIP("127.0.0.1"), Port: 4000}})
	ctx = metadata.NewIncomingContext(ctx, metadata.Pairs("x-forwarded-for", "198.51.100.9"))
	got := r.FromIncoming(ctx)
	if got.String() != "198.51.100.9" {
		t.Fatalf("got %s", got)
	}
	out := clientaddr.Forward(metadata.AppendToOutgoingContext(context.Background(), "x-forwarded-for", "6.6.6.6"), got)
	md, _ := metadata.FromOutgoingContext(out)
	if v := md.Get("x-forwarded-for"); len(v) != 1 || v[0] != "198.51.100.9" {
		t.Fatalf("forwarded %v", v)
	}
}

func TestKeyGroupsIPv6By64(t *testing.T) {
	a := clientaddr.Key(netip.MustParseAddr("2001:db8:1:2:3:4:5:6"))
	b := clientaddr.Key(netip.MustParseAddr("2001:db8:1:2:ffff::1"))
	if a != b || a != "2001:db8:1:2::/64" {
		t.Fatalf("%s, %s", a, b)
	}
	if k := clientaddr.Key(netip.MustParseAddr("192.0.2.1")); k != "192.0.2.1" {
		t.Fatal(k)
	}
}
