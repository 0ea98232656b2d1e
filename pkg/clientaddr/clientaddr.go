// Package clientaddr finds the address a request came from: the TCP peer,
// or, when the peer is a proxy the deployment trusts, the address that proxy
// recorded in X-Forwarded-For. A header an arbitrary client sets is never
// believed: only the entries appended by trusted proxies are walked.
package clientaddr

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"strings"

	"google.golang.org/grpc"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/peer"
)

// ForwardedFor is the metadata key (and, canonicalised, the HTTP header)
// that carries the chain of addresses a request passed through.
const ForwardedFor = "x-forwarded-for"

// Resolver knows which proxies are trusted to report a client's address.
// The zero Resolver trusts none: the peer is the client.
type Resolver struct {
	trusted []netip.Prefix
}

// NewResolver trusts the proxies in the given CIDRs ("10.0.0.0/8") or
// single addresses ("127.0.0.1").
func NewResolver(cidrs []string) (Resolver, error) {
	var r Resolver
	for _, s := range cidrs {
		s = strings.TrimSpace(s)
		if s == "" {
			continue
		}
		if !strings.Contains(s, "/") {
			a, err := netip.ParseAddr(s)
			if err != nil {
				return Resolver{}, fmt.Errorf("%q is neither a CIDR nor an address", s)
			}
			r.trusted = append(r.trusted, netip.PrefixFrom(a.Unmap(), a.Unmap().BitLen()))
			continue
		}
		p, err := netip.ParsePrefix(s)
		if err != nil {
			return Resolver{}, fmt.Errorf("%q is not a CIDR", s)
		}
		r.trusted = append(r.trusted, p.Masked())
	}
	return r, nil
}

// Trusts reports whether a is one of the trusted proxies.
func (r Resolver) Trusts(a netip.Addr) bool {
	a = a.Unmap()
	for _, p := range r.trusted {
		if p.Contains(a) {
			return true
		}
	}
	return false
}

// Resolve returns the client's address given the TCP peer and the
// X-Forwarded-For values in the order received. It walks the chain from the
// right for as long as the hop that reported an entry is trusted; an entry
// that is not an address ends the walk at the hop that wrote it.
func (r Resolver) Resolve(peer netip.Addr, forwardedFor []string) netip.Addr {
	addr := peer.Unmap()
	var hops []string
	for _, v := range forwardedFor {
		hops = append(hops, strings.Split(v, ",")...)
	}
	for i := len(hops) - 1; i >= 0 && r.Trusts(addr); i-- {
		next, err := netip.ParseAddr(strings.TrimSpace(hops[i]))
		if err != nil {
			break
		}
		addr = next.Unmap()
	}
	return addr
}

// FromRequest returns the client address of an HTTP request.
func (r Resolver) FromRequest(req *http.Request) netip.Addr {
	return r.Resolve(parseHostPort(req.RemoteAddr), req.Header.Values(ForwardedFor))
}

// FromIncoming returns the client address of a gRPC call: the peer, or what
// a trusted peer (the gateway, another service) forwarded.
func (r Resolver) FromIncoming(ctx context.Context) netip.Addr {
	var from netip.Addr
	if p, ok := peer.FromContext(ctx); ok && p.Addr != nil {
		from = parseHostPort(p.Addr.String())
	}
	return r.Resolve(from, metadata.ValueFromIncomingContext(ctx, ForwardedFor))
}

// Forward returns ctx with addr as the outgoing x-forwarded-for, so the
// next service sees the same client; it replaces whatever was there.
func Forward(ctx context.Context, addr netip.Addr) context.Context {
	if !addr.IsValid() {
		return ctx
	}
	md, _ := metadata.FromOutgoingContext(ctx)
	md = md.Copy()
	md.Set(ForwardedFor, addr.String())
	return metadata.NewOutgoingContext(ctx, md)
}

// Key is how counters name the client: the address itself for IPv4, and its
// /64 network for IPv6, since one subscriber usually holds a whole /64.
func Key(a netip.Addr) string {
	switch {
	case !a.IsValid():
		return "unknown"
	case a.Is4():
		return a.String()
	}
	p, _ := a.Prefix(64)
	return p.String()
}

func parseHostPort(s string) netip.Addr {
	if ap, err := netip.ParseAddrPort(s); err == nil {
		return ap.Addr().Unmap()
	}
	host, _, err := net.SplitHostPort(s)
	if err != nil {
		host = s
	}
	a, _ := netip.ParseAddr(host)
	return a.Unmap()
}

type contextKey struct{}

// NewContext returns ctx carrying the client address a.
func NewContext(ctx context.Context, a netip.Addr) context.Context {
	return context.WithValue(ctx, contextKey{}, a)
}

// FromContext returns the client address NewContext put in ctx.
func FromContext(ctx context.Context) (netip.Addr, bool) {
	a, ok := ctx.Value(contextKey{}).(netip.Addr)
	return a, ok && a.IsValid()
}

// UnaryServerInterceptor resolves each call's client address once and puts
// it in the call's context, where FromContext finds it and
// UnaryClientInterceptor forwards it.
func (r Resolver) UnaryServerInterceptor() grpc.UnaryServerInterceptor {
	return func(ctx context.Context, req any, _ *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (any, error) {
		return handler(NewContext(ctx, r.FromIncoming(ctx)), req)
	}
}

// UnaryClientInterceptor forwards the client address of the call being
// served, if any, as x-forwarded-for, so the next service counts the same
// client.
func UnaryClientInterceptor() grpc.UnaryClientInterceptor {
	return func(ctx context.Context, method string, req, reply any, cc *grpc.ClientConn, invoker grpc.UnaryInvoker, opts ...grpc.CallOption) error {
		if a, ok := FromContext(ctx); ok {
			ctx = Forward(ctx, a)
		}
		return invoker(ctx, method, req, reply, cc, opts...)
	}
}
