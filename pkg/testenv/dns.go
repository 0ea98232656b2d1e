package testenv

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"net/netip"
	"strings"
	"sync"
	"time"

	"golang.org/x/net/dns/dnsmessage"
)

// dnsUDPSize is the largest answer sent over UDP to a query without EDNS:
// a longer one is sent truncated, and the client asks again over TCP.
const dnsUDPSize = 512

// dnsIdle is how long a TCP connection may wait for its next query.
const dnsIdle = 10 * time.Second

// DNSServer is a DNS server on a loopback port, over UDP and TCP, that
// answers address queries (A, AAAA) for the names a test sets and nothing
// else: the way
// several replicas of a service are found under one name (as a headless
// Kubernetes Service's name gives every ready pod), with gRPC's DNS
// resolver pointed at it by a dns://host:port/name:port target.
//
// Answers carry TTL 0, so nothing caches them and a Set is seen by the next
// query. A set name answers other types (TXT, SRV) with no records; any
// other name, such as gRPC's _grpc_config TXT lookup, does not exist
// (NXDOMAIN).
type DNSServer struct {
	udp net.PacketConn
	tcp net.Listener
	wg  sync.WaitGroup

	mu     sync.Mutex
	names  map[string][]netip.Addr // by lower-case fully qualified name
	conns  map[net.Conn]struct{}   // open TCP connections, closed by Close
	closed bool
}

// StartDNS starts a DNS server on a free port of 127.0.0.1, the same port
// for UDP and TCP.
func StartDNS() (*DNSServer, error) {
	var errs []error
	for range startAttempts {
		s, err := listenDNS()
		if err == nil {
			s.wg.Go(s.serveUDP)
			s.wg.Go(s.serveTCP)
			return s, nil
		}
		errs = append(errs, err)
	}
	return nil, fmt.Errorf("start a DNS server: %w", errors.Join(errs...))
}

// listenDNS binds a free UDP port and the same port over TCP, which
// another process may have taken.
func listenDNS() (*DNSServer, error) {
	udp, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	tcp, err := net.Listen("tcp", udp.LocalAddr().String())
	if err != nil {
		udp.Close()
		return nil, err
	}
	return &DNSServer{udp: udp, tcp: tcp, names: map[string][]netip.Addr{}, conns: map[net.Conn]struct{}{}}, nil
}

// Addr is the host:port the server answers on.
func (s *DNSServer) Addr() string { return s.udp.LocalAddr().String() }

// Set makes name answer addrs, in that order, from the next query on.
// With no addrs the name no longer exists.
func (s *DNSServer) Set(name string, addrs ...netip.Addr) {
	key := fqdn(name)
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(addrs) == 0 {
		delete(s.names, key)
		return
	}
	s.names[key] = append([]netip.Addr(nil), addrs...)
}

// Close stops the server and waits until it has stopped.
func (s *DNSServer) Close() error {
	err := errors.Join(s.udp.Close(), s.tcp.Close())
	s.mu.Lock()
	s.closed = true
	for c := range s.conns {
		c.Close()
	}
	s.mu.Unlock()
	s.wg.Wait()
	return err
}

func fqdn(name string) string {
	return strings.ToLower(strings.TrimSuffix(name, ".")) + "."
}

func (s *DNSServer) serveUDP() {
	buf := make([]byte, 64<<10)
	for {
		n, from, err := s.udp.ReadFrom(buf)
		if err != nil {
			return // closed
		}
		if answer, ok := s.answer(buf[:n], dnsUDPSize); ok {
			_, _ = s.udp.WriteTo(answer, from)
		}
	}
}

func (s *DNSServer) serveTCP() {
	for {
		c, err := s.tcp.Accept()
		if err != nil {
			return // closed
		}
		s.mu.Lock()
		if s.closed { // accepted while Close was running
			s.mu.Unlock()
			c.Close()
			return
		}
		s.conns[c] = struct{}{}
		s.mu.Unlock()
		s.wg.Go(func() {
			defer func() {
				s.mu.Lock()
				delete(s.conns, c)
				s.mu.Unlock()
				c.Close()
			}()
			s.serveConn(c)
		})
	}
}

// serveConn answers the queries of one TCP connection, each framed by its
// length in two bytes, until the client closes it or stays idle.
func (s *DNSServer) serveConn(c net.Conn) {
	for {
		_ = c.SetDeadline(time.Now().Add(dnsIdle))
		var size [2]byte
		if _, err := io.ReadFull(c, size[:]); err != nil {
			return
		}
		query := make([]byte, binary.BigEndian.Uint16(size[:]))
		if _, err := io.ReadFull(c, query); err != nil {
			return
		}
		answer, ok := s.answer(query, 0)
		if !ok {
			return
		}
		if _, err := c.Write(binary.BigEndian.AppendUint16(nil, uint16(len(answer)))); err != nil {
			return
		}
		if _, err := c.Write(answer); err != nil {
			return
		}
	}
}

// answer builds the reply to one query; an answer longer than limit (when
// not zero) is replaced by a truncated one with the question only. It
// reports false for what is not a DNS query at all, which gets no reply.
func (s *DNSServer) answer(query []byte, limit int) ([]byte, bool) {
	var p dnsmessage.Parser
	h, err := p.Start(query)
	if err != nil || h.Response {
		return nil, false
	}
	reply := dnsmessage.Message{Header: dnsmessage.Header{
		ID: h.ID, Response: true, OpCode: h.OpCode, Authoritative: true, RecursionDesired: h.RecursionDesired,
	}}
	q, err := p.Question()
	switch {
	case err != nil:
		reply.RCode = dnsmessage.RCodeFormatError
	case h.OpCode != 0:
		reply.RCode = dnsmessage.RCodeNotImplemented
	default:
		reply.Questions = []dnsmessage.Question{q}
		reply.RCode, reply.Answers = s.records(q)
	}
	out, err := reply.Pack()
	if err != nil {
		return nil, false
	}
	if limit > 0 && len(out) > limit {
		reply.Truncated, reply.Answers = true, nil
		if out, err = reply.Pack(); err != nil {
			return nil, false
		}
	}
	return out, true
}

// records are the answers to q: the name's IPv4 addresses for an A query,
// its IPv6 ones for AAAA, none for another type of a set name, NXDOMAIN
// for any other name.
func (s *DNSServer) records(q dnsmessage.Question) (dnsmessage.RCode, []dnsmessage.Resource) {
	s.mu.Lock()
	addrs, ok := s.names[fqdn(q.Name.String())]
	s.mu.Unlock()
	if !ok || q.Class != dnsmessage.ClassINET {
		return dnsmessage.RCodeNameError, nil
	}
	var answers []dnsmessage.Resource
	for _, a := range addrs {
		var body dnsmessage.ResourceBody
		switch {
		case q.Type == dnsmessage.TypeA && a.Is4():
			body = &dnsmessage.AResource{A: a.As4()}
		case q.Type == dnsmessage.TypeAAAA && a.Is6() && !a.Is4In6():
			body = &dnsmessage.AAAAResource{AAAA: a.As16()}
		default:
			continue
		}
		answers = append(answers, dnsmessage.Resource{
			Header: dnsmessage.ResourceHeader{Name: q.Name, Type: q.Type, Class: dnsmessage.ClassINET, TTL: 0},
			Body:   body,
		})
	}
	return dnsmessage.RCodeSuccess, answers
}
