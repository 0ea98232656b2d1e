package stack

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"strconv"
	"strings"
	"sync/atomic"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"

	"github.com/liveproctor/workspaces/pkg/testenv"
)

// Replicas says how many processes of each service a stack runs; zero
// means one. With any count set, the services find each other by name, as
// in a cluster: each replica of the workspace and auth services listens on
// a loopback address of its own with its service's one port (127.0.0.2:P,
// 127.0.0.3:P, …, the way pods behind a headless Service share a port),
// the stack's DNS server answers workspace.stack.test and auth.stack.test
// with the addresses of the replicas that serve, and the services are
// given dns://<that server>/workspace.stack.test:P and the like, which
// gRPC's DNS resolver turns into every replica. Each gateway listens on a
// port of its own; callers choose one.
type Replicas struct {
	Workspace, Auth, Gateway int
}

// count is how many processes of service to start.
func (n Replicas) count(service string) int {
	c := map[string]int{"workspace": n.Workspace, "auth": n.Auth, "gateway": n.Gateway}[service]
	return max(c, 1)
}

// serviceNames are the names the DNS server gives each service's replicas.
var serviceNames = map[string]string{
	"workspace": "workspace.stack.test",
	"auth":      "auth.stack.test",
}

// replicaEnv lets a replica started later get calls within seconds, where
// production takes up to a minute: servers ask clients to leave a
// connection after 2 s, so clients resolve the name again, at most every
// 500 ms. Calls in flight on such a connection keep production's 10 s to
// finish, as long as the request deadline: a shorter grace would cut a
// slow call (a write waiting on the stand-in) short. Options.Env comes
// after it and may change it.
var replicaEnv = []string{
	"GRPC_MAX_CONNECTION_AGE=2s",
	"GRPC_MAX_CONNECTION_AGE_GRACE=10s",
	"GRPC_DNS_MIN_RESOLUTION_INTERVAL=500ms",
}

// Replica is one process a stack started.
type Replica struct {
	Name        string // the service's name, or with replicas "workspace-2"
	Service     string // "workspace", "auth" or "gateway"
	Addr        string // where it serves: gRPC, or the gateway's HTTP
	MetricsAddr string // where it serves /metrics

	proc      *testenv.Process
	ended     atomic.Bool // stopped or killed by the stack
	published bool        // named in DNS; guarded by the stack's mu
}

// PID is the process id, for measurements.
func (r *Replica) PID() int { return r.proc.PID() }

// running reports whether the process is running and the stack has not
// ended it.
func (r *Replica) running() bool {
	select {
	case <-r.proc.Done():
		return false
	default:
		return !r.ended.Load()
	}
}

// startReplicas starts the DNS server, then the replicas of each service
// in turn, each named in DNS once it serves, the gateways last.
func (s *Stack) startReplicas(ctx context.Context, opts Options) error {
	if opts.WorkspaceAddr != "" || opts.AuthAddr != "" {
		return errors.New("stack: with Replicas the stack picks the services' addresses: leave WorkspaceAddr and AuthAddr empty")
	}
	var err error
	if s.DNS, err = testenv.StartDNS(); err != nil {
		return err
	}
	s.ports = map[string]string{}
	for service := range serviceNames {
		if s.ports[service], err = freePort(replicaHost(1)); err != nil {
			return err
		}
	}
	s.WorkspaceAddr, s.AuthAddr = s.target("workspace"), s.target("auth")
	s.base = append(append(append([]string(nil), replicaEnv...), opts.Env...),
		"MONGODB_URI="+s.MongoURI,
		"REDIS_ADDR="+s.RedisAddr,
		"WORKSPACE_SERVICE_ADDR="+s.WorkspaceAddr,
		"AUTH_SERVICE_ADDR="+s.AuthAddr,
	)
	for _, c := range commands {
		var started []*Replica
		for i := range opts.Replicas.count(c.name) {
			addr := ""
			if c.name == "gateway" && i == 0 {
				addr = opts.GatewayAddr
			}
			r, err := s.startReplica(c.name, addr)
			if err != nil {
				return err
			}
			started = append(started, r)
		}
		for _, r := range started {
			if err := s.waitServing(ctx, r); err != nil {
				return err
			}
			s.publish(r)
		}
	}
	first := func(service string) *Replica { return s.Replicas(service)[0] }
	s.GatewayAddr, s.GatewayMetricsAddr = first("gateway").Addr, first("gateway").MetricsAddr
	s.GatewayURL = "http://" + s.GatewayAddr
	s.WorkspaceMetricsAddr, s.AuthMetricsAddr = first("workspace").MetricsAddr, first("auth").MetricsAddr
	return nil
}

// target is the gRPC target naming every replica of service.
func (s *Stack) target(service string) string {
	return fmt.Sprintf("dns://%s/%s", s.DNS.Addr(), net.JoinHostPort(serviceNames[service], s.ports[service]))
}

// replicaHost is the loopback address of a service's k-th replica (from 1).
func replicaHost(k int) netip.Addr { return netip.AddrFrom4([4]byte{127, 0, 0, byte(1 + k)}) }

// freePort returns a port nobody listens on at host now.
func freePort(host netip.Addr) (string, error) {
	l, err := net.Listen("tcp", net.JoinHostPort(host.String(), "0"))
	if err != nil {
		return "", fmt.Errorf("find a free port: %w", err)
	}
	defer l.Close()
	_, port, err := net.SplitHostPort(l.Addr().String())
	return port, err
}

// startReplica starts the next replica of service, on addr or, when empty,
// on the next loopback address with the service's port (a gateway: on a
// free port).
func (s *Stack) startReplica(service, addr string) (*Replica, error) {
	s.mu.Lock()
	s.started[service]++
	k := s.started[service]
	s.mu.Unlock()
	if k > 253 {
		return nil, fmt.Errorf("stack: no loopback address left for a %s replica", service)
	}
	var err error
	if addr == "" {
		if port, ok := s.ports[service]; ok {
			addr = net.JoinHostPort(replicaHost(k).String(), port)
		} else if addr, err = testenv.FreeAddr(); err != nil {
			return nil, err
		}
	}
	metrics, err := testenv.FreeAddr()
	if err != nil {
		return nil, err
	}
	return s.launch(service, fmt.Sprintf("%s-%d", service, k), addr, metrics)
}

// waitServing waits until r answers: a service's gRPC health check
// SERVING, a gateway's /readyz 200.
func (s *Stack) waitServing(ctx context.Context, r *Replica) error {
	ctx, cancel := context.WithTimeout(ctx, s.readyTimeout)
	defer cancel()
	check := testenv.HTTPOK("http://" + r.Addr + "/readyz")
	if r.Service != "gateway" {
		conn, err := grpc.NewClient("passthrough:///"+r.Addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
		if err != nil {
			return err
		}
		defer conn.Close()
		health := healthpb.NewHealthClient(conn)
		check = func(ctx context.Context) error {
			resp, err := health.Check(ctx, &healthpb.HealthCheckRequest{})
			if err != nil {
				return err
			}
			if resp.GetStatus() != healthpb.HealthCheckResponse_SERVING {
				return fmt.Errorf("health %s", resp.GetStatus())
			}
			return nil
		}
	}
	if err := testenv.WaitReady(ctx, check, r.proc); err != nil {
		return fmt.Errorf("%s on %s did not serve within %s: %w\n%s output:\n%s", r.Name, r.Addr, s.readyTimeout, err, r.Name, r.proc.Output())
	}
	return nil
}

// publish names r in DNS with the other replicas of its service that
// serve (a gateway has no name).
func (s *Stack) publish(r *Replica) {
	s.mu.Lock()
	r.published = true
	s.mu.Unlock()
	s.updateName(r.Service)
}

// updateName answers the name of service with the replicas published and
// running, in start order.
func (s *Stack) updateName(service string) {
	name, ok := serviceNames[service]
	if !ok || s.DNS == nil {
		return
	}
	s.mu.Lock()
	var addrs []netip.Addr
	for _, r := range s.replicas {
		if r.Service == service && r.published && r.running() {
			addrs = append(addrs, netip.MustParseAddrPort(r.Addr).Addr())
		}
	}
	s.mu.Unlock()
	s.DNS.Set(name, addrs...)
}

// Replicas returns the running processes of service ("workspace", "auth"
// or "gateway"), in start order.
func (s *Stack) Replicas(service string) []*Replica {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []*Replica
	for _, r := range s.replicas {
		if r.Service == service && r.running() {
			out = append(out, r)
		}
	}
	return out
}

// AddReplica starts another replica of service, waits until it serves,
// and then names it in DNS beside the others, as Kubernetes adds a pod to
// a headless Service once it is ready. Only a stack started with Replicas
// can grow.
func (s *Stack) AddReplica(ctx context.Context, service string) (*Replica, error) {
	if s.DNS == nil {
		return nil, errors.New("stack: replicas are added only to a stack started with Options.Replicas")
	}
	r, err := s.startReplica(service, "")
	if err != nil {
		return nil, err
	}
	if err := s.waitServing(ctx, r); err != nil {
		r.ended.Store(true)
		return nil, errors.Join(err, r.proc.Stop())
	}
	s.publish(r)
	return r, nil
}

// KillReplica ends r at once (SIGKILL), as a crash would, waits until it
// has exited, and then takes it out of its service's name, as Kubernetes
// takes a dead pod out of a Service.
func (s *Stack) KillReplica(r *Replica) error {
	r.ended.Store(true)
	err := r.proc.Kill()
	s.updateName(r.Service)
	return err
}

// Served returns how many calls of a gRPC method (such as
// "/auth.v1.AuthService/CreateSdkToken") r has served, whatever their
// status, from its /metrics (grpc_server_handling_seconds_count).
func (r *Replica) Served(ctx context.Context, method string) (int, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+r.MetricsAddr+"/metrics", nil)
	if err != nil {
		return 0, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, fmt.Errorf("%s's metrics: %w", r.Name, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return 0, fmt.Errorf("%s's metrics: %s", r.Name, resp.Status)
	}
	total := 0
	lines := bufio.NewScanner(resp.Body)
	for lines.Scan() {
		series, value, ok := strings.Cut(lines.Text(), " ")
		if !ok || !strings.HasPrefix(series, "grpc_server_handling_seconds_count{") ||
			!strings.Contains(series, `grpc_method="`+method+`"`) {
			continue
		}
		// Prometheus writes counts as floats: a million is 1e+06.
		n, err := strconv.ParseFloat(value, 64)
		if err != nil {
			return 0, fmt.Errorf("%s's metrics: %q", r.Name, lines.Text())
		}
		total += int(n)
	}
	if err := lines.Err(); err != nil {
		return 0, fmt.Errorf("%s's metrics: %w", r.Name, err)
	}
	return total, nil
}
