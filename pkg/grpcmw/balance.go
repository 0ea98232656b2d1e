package grpcmw

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/url"
	"strconv"
	"strings"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/keepalive"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/resolver/dns"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"
	"google.golang.org/protobuf/types/descriptorpb"

	"github.com/liveproctor/workspaces/pkg/envconfig"
	"github.com/liveproctor/workspaces/pkg/fault"
)

// How a component reaches every replica of another.
//
// A gRPC client keeps its HTTP/2 connections for as long as they live, and
// sends every call over them. Behind a ClusterIP Service, kube-proxy
// balances connections, not calls: each client would send everything to the
// one pod its connection reached, and pods the autoscaler adds would get
// nothing. So a client resolves the service's name to every ready replica (a
// headless Service answers DNS with each pod's address; the target is
// dns:///name:port), connects to each, and spreads calls over them
// (round_robin).
//
// grpc-go resolves a name again only when a connection is lost, and at most
// once per MinResolutionInterval. Servers therefore close every connection
// after MaxConnectionAge (GOAWAY, after which calls in flight get
// MaxConnectionAgeGrace to finish): the client reconnects, resolves again,
// and connects to replicas added since. A new replica gets its share within
// about MaxConnectionAge + MinResolutionInterval (a minute by default).
//
// A replica that dies or drains costs at most the calls in flight on it.
// grpc-go retries, transparently, a call that never reached a server, and
// the round_robin picker stops choosing a replica as soon as its connection
// fails. Methods the protos declare idempotent (idempotency_level) are also
// retried on UNAVAILABLE, which a dead replica's calls in flight end with,
// within a token bucket so that a real outage is not multiplied.

// ClientSettings are a gRPC client's settings (GRPC_DNS_MIN_RESOLUTION_INTERVAL).
type ClientSettings struct {
	// MinResolutionInterval is the least time between two DNS resolutions
	// of one target.
	MinResolutionInterval time.Duration
}

// ServerSettings are a gRPC server's settings (GRPC_MAX_CONNECTION_AGE,
// GRPC_MAX_CONNECTION_AGE_GRACE).
type ServerSettings struct {
	// MaxConnectionAge is how long a connection may live before the server
	// asks the client to go (the client then resolves again and reconnects);
	// grpc-go varies it by ±10% per connection, so clients do not all
	// reconnect at once.
	MaxConnectionAge time.Duration
	// MaxConnectionAgeGrace is how long calls in flight on such a connection
	// may still run before it is closed.
	MaxConnectionAgeGrace time.Duration
}

// Defaults of the settings: a replica added by the autoscaler gets its
// share within about a minute; a call has the whole grace to finish (the
// gateway's deadline is 10 s).
const (
	DefaultMinResolutionInterval = 30 * time.Second
	DefaultMaxConnectionAge      = 30 * time.Second
	DefaultMaxConnectionAgeGrace = 10 * time.Second
)

// ReadClientSettings reads a client's settings through r.
func ReadClientSettings(r *envconfig.Reader) ClientSettings {
	return ClientSettings{MinResolutionInterval: r.Duration("GRPC_DNS_MIN_RESOLUTION_INTERVAL", DefaultMinResolutionInterval)}
}

// ReadServerSettings reads a server's settings through r.
func ReadServerSettings(r *envconfig.Reader) ServerSettings {
	return ServerSettings{
		MaxConnectionAge:      r.Duration("GRPC_MAX_CONNECTION_AGE", DefaultMaxConnectionAge),
		MaxConnectionAgeGrace: r.Duration("GRPC_MAX_CONNECTION_AGE_GRACE", DefaultMaxConnectionAgeGrace),
	}
}

// Apply puts the client settings in force for the whole process. grpc-go
// keeps the resolution interval in a global, read by every resolver: call it
// once, from main, before the first connection is made.
func (s ClientSettings) Apply() {
	dns.SetMinResolutionInterval(s.MinResolutionInterval)
}

// ReadTarget reads a gRPC target (name) through r: host:port, or a URI such
// as dns:///name:port (every address the name resolves to) or
// dns://resolver:53/name:port (asking that DNS server). With an empty
// default the target is optional, and "" means none.
func ReadTarget(r *envconfig.Reader, name, def string) string {
	v := r.String(name, def)
	if v == "" && def == "" {
		return ""
	}
	if err := checkTarget(v); err != "" {
		r.Invalid(name, "must be host:port or a gRPC target such as dns:///name:port (%s), got %q", err, v)
	}
	return v
}

// checkTarget returns what is wrong with a target, or "". A target without
// a scheme is resolved by DNS as grpc.NewClient does.
func checkTarget(target string) string {
	endpoint := target
	if u, err := url.Parse(target); err == nil && u.Scheme != "" && u.Opaque == "" {
		switch u.Scheme {
		case "dns":
		case "passthrough":
			// An address used as it is, unresolved.
		default:
			return "the scheme must be dns or passthrough"
		}
		endpoint = strings.TrimPrefix(u.Path, "/")
		if u.Host != "" && !validHostPort(u.Host, true) {
			return "the DNS server must be host or host:port"
		}
	}
	if !validHostPort(endpoint, false) {
		return "the name must be host:port, the port a number from 1 to 65535"
	}
	return ""
}

// validHostPort reports whether s is host:port with a port from 1 to
// 65535, or (with portOptional) a host alone.
func validHostPort(s string, portOptional bool) bool {
	host, port, err := net.SplitHostPort(s)
	if err != nil {
		return portOptional && s != "" && !strings.ContainsAny(s, "/:")
	}
	n, err := strconv.Atoi(port)
	return host != "" && !strings.Contains(host, "/") && err == nil && n >= 1 && n <= 65535
}

// Keepalive: a client pings a connection idle for keepaliveTime and drops
// it when no answer comes within keepaliveTimeout, so a replica that
// vanished without closing its connections (a lost node) is noticed in
// seconds, not after the kernel's TCP timeouts. Servers allow pings that
// often (minPingInterval is below keepaliveTime); otherwise they would
// answer a GOAWAY for too many pings.
const (
	keepaliveTime    = 20 * time.Second
	keepaliveTimeout = 10 * time.Second
	minPingInterval  = 10 * time.Second
)

// DialOptions are the options every client connection of ours to the
// replicas of services is made with: the flow-control windows
// (transport.go), round_robin over every address the target resolves to,
// keepalive, and a retry policy for the methods each service declares
// idempotent. The service config is this one: a service config published in
// DNS (TXT records) is not looked up, so nobody who can write DNS records
// can change how the services call each other.
func DialOptions(services ...string) []grpc.DialOption {
	return []grpc.DialOption{
		grpc.WithInitialWindowSize(streamWindow),
		grpc.WithInitialConnWindowSize(connWindow),
		grpc.WithDefaultServiceConfig(ServiceConfig(services...)),
		grpc.WithDisableServiceConfig(),
		grpc.WithKeepaliveParams(keepalive.ClientParameters{
			Time: keepaliveTime, Timeout: keepaliveTimeout, PermitWithoutStream: true,
		}),
		grpc.WithChainUnaryInterceptor(lastAttemptsStatus),
	}
}

// lastAttemptsStatus returns the status of a call's last attempt as the
// call's error. When every attempt a retry policy allows has failed,
// grpc-go wraps the last one's status in "max retries exhausted: failed
// after 3 attempts: rpc error: …", which keeps the code but would carry
// that text, the library's and not the service's, to the caller.
func lastAttemptsStatus(ctx context.Context, method string, req, reply any, cc *grpc.ClientConn, invoker grpc.UnaryInvoker, opts ...grpc.CallOption) error {
	err := invoker(ctx, method, req, reply, cc, opts...)
	if err == nil {
		return nil
	}
	var st interface{ GRPCStatus() *status.Status }
	if errors.As(err, &st) {
		return st.GRPCStatus().Err()
	}
	return err
}

// Retries of idempotent methods on UNAVAILABLE: at most three attempts,
// the second after up to 50 ms, the third after up to 100 ms more, each
// within the call's own deadline. Every failed attempt takes a token from
// a bucket of retryTokens and every success gives a tenth of one back; at
// half full or below no call is retried. So a replica dying with up to
// half the bucket's calls in flight costs none of the idempotent ones,
// and when every replica fails (the store is down) calls soon go out once
// each, as without retries, until successes refill the bucket.
const retryTokens = 200

var retryPolicy = map[string]any{
	"maxAttempts":          3,
	"initialBackoff":       "0.05s",
	"maxBackoff":           "0.2s",
	"backoffMultiplier":    2,
	"retryableStatusCodes": []string{"UNAVAILABLE"},
}

// pushbackTrailer is the trailer by which a server tells gRPC clients when
// to retry its answer: a negative value, never (gRFC A6).
const pushbackTrailer = "grpc-retry-pushback-ms"

// refuseRetries tells the client not to retry an unavailability that says
// when to come back (a fault with a RetryAfter: the total of the anonymous
// limits, the cap on pending logins, a platform's Retry-After): every
// replica would answer the same until then,
// and retries would only count against the limits again. Nor a platform's
// refusal (BadGateway, sent as UNAVAILABLE): another replica would ask the
// same platform and hear the same. An unavailability without a delay (a
// replica stopping, a store failing over) is retried as the policy says.
func refuseRetries(ctx context.Context, err error) {
	if e, ok := fault.As(err); ok && (e.Kind == fault.Unavailable && e.RetryAfter > 0 || e.Kind == fault.BadGateway) {
		_ = grpc.SetTrailer(ctx, metadata.Pairs(pushbackTrailer, "-1"))
	}
}

// ServiceConfig is the gRPC service config of a client of services, by
// their full names (see DialOptions), as JSON. Each must be registered: its
// generated package imported, as the caller's use of its ServiceDesc does.
func ServiceConfig(services ...string) string {
	type name struct {
		Service string `json:"service"`
		Method  string `json:"method"`
	}
	var idempotent []name
	for _, service := range services {
		d, err := protoregistry.GlobalFiles.FindDescriptorByName(protoreflect.FullName(service))
		if err != nil {
			panic(fmt.Sprintf("grpcmw: service %s: %v", service, err))
		}
		sd := d.(protoreflect.ServiceDescriptor)
		methods := sd.Methods()
		for i := range methods.Len() {
			m := methods.Get(i)
			if Idempotent(m) {
				idempotent = append(idempotent, name{Service: string(sd.FullName()), Method: string(m.Name())})
			}
		}
	}
	config := map[string]any{
		"loadBalancingConfig": []any{map[string]any{"round_robin": map[string]any{}}},
		"retryThrottling":     map[string]any{"maxTokens": retryTokens, "tokenRatio": 0.1},
	}
	if len(idempotent) > 0 {
		config["methodConfig"] = []any{map[string]any{"name": idempotent, "retryPolicy": retryPolicy}}
	}
	b, err := json.Marshal(config)
	if err != nil {
		panic(err) // maps of strings and numbers always marshal
	}
	return string(b)
}

// Idempotent reports whether the proto declares the method safe to call
// again (option idempotency_level = NO_SIDE_EFFECTS or IDEMPOTENT).
func Idempotent(m protoreflect.MethodDescriptor) bool {
	opts, ok := m.Options().(*descriptorpb.MethodOptions)
	return ok && opts.GetIdempotencyLevel() != descriptorpb.MethodOptions_IDEMPOTENCY_UNKNOWN
}

// connectionAgeOptions are the keepalive options of a server (see
// ServerSettings and the keepalive constants).
func connectionAgeOptions(s ServerSettings) []grpc.ServerOption {
	return []grpc.ServerOption{
		grpc.KeepaliveParams(keepalive.ServerParameters{
			MaxConnectionAge:      s.MaxConnectionAge,
			MaxConnectionAgeGrace: s.MaxConnectionAgeGrace,
			Time:                  keepaliveTime,
			Timeout:               keepaliveTimeout,
		}),
		grpc.KeepaliveEnforcementPolicy(keepalive.EnforcementPolicy{MinTime: minPingInterval, PermitWithoutStream: true}),
	}
}
