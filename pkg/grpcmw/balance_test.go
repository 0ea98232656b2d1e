package grpcmw_test

import (
	"context"
	"encoding/json"
	"log/slog"
	"net"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/resolver"
	"google.golang.org/grpc/resolver/manual"
	"google.golang.org/grpc/status"

	"github.com/liveproctor/workspaces/pkg/envconfig"
	"github.com/liveproctor/workspaces/pkg/fault"
	authv1 "github.com/liveproctor/workspaces/pkg/gen/auth/v1"
	workspacev1 "github.com/liveproctor/workspaces/pkg/gen/workspace/v1"
	"github.com/liveproctor/workspaces/pkg/grpcmw"
)

func TestServiceConfigRetriesTheIdempotentMethodsOnly(t *testing.T) {
	var config struct {
		LoadBalancingConfig []map[string]json.RawMessage
		MethodConfig        []struct {
			Name []struct{ Service, Method string }
		}
	}
	raw := grpcmw.ServiceConfig(workspacev1.WorkspaceService_ServiceDesc.ServiceName, authv1.AuthService_ServiceDesc.ServiceName)
	if err := json.Unmarshal([]byte(raw), &config); err != nil {
		t.Fatal(err)
	}
	if len(config.LoadBalancingConfig) != 1 || config.LoadBalancingConfig[0]["round_robin"] == nil {
		t.Errorf("loadBalancingConfig = %v, want round_robin", config.LoadBalancingConfig)
	}
	var retried []string
	for _, mc := range config.MethodConfig {
		for _, n := range mc.Name {
			retried = append(retried, n.Service+"/"+n.Method)
		}
	}
	slices.Sort(retried)
	want := []string{
		"auth.v1.AuthService/GetSdkSession",
		"auth.v1.AuthService/IntrospectSdkToken",
		"workspace.v1.WorkspaceService/Authenticate",
		"workspace.v1.WorkspaceService/GetLtiConfiguration",
		"workspace.v1.WorkspaceService/GetLtiLaunch",
		"workspace.v1.WorkspaceService/GetLtiRegistration",
		"workspace.v1.WorkspaceService/GetLtiScore",
		"workspace.v1.WorkspaceService/GetLtiToolKeys",
		"workspace.v1.WorkspaceService/GetPortalSession",
		"workspace.v1.WorkspaceService/GetWebhook",
		"workspace.v1.WorkspaceService/GetWorkspace",
		"workspace.v1.WorkspaceService/GetWorkspaceStatus",
		"workspace.v1.WorkspaceService/ListLtiLaunchMembers",
		"workspace.v1.WorkspaceService/ListLtiRegistrations",
		"workspace.v1.WorkspaceService/ListWebhookAttempts",
		"workspace.v1.WorkspaceService/ListWebhooks",
		"workspace.v1.WorkspaceService/ListWorkspaceEvents",
		"workspace.v1.WorkspaceService/ListWorkspaceKeys",
		"workspace.v1.WorkspaceService/ListWorkspaces",
		"workspace.v1.WorkspaceService/RevokePortalLink",
	}
	if !slices.Equal(retried, want) {
		t.Errorf("retried methods = %v\nwant %v", retried, want)
	}
}

func TestReadTarget(t *testing.T) {
	for _, c := range []struct {
		value string
		ok    bool
	}{
		{"127.0.0.1:9090", true},
		{"workspace:9090", true},
		{"dns:///workspace.svc.cluster.local:9090", true},
		{"dns://10.0.0.10:53/workspace:9090", true},
		{"passthrough:///127.0.0.1:9090", true},
		{"[::1]:9090", true},
		{"workspace", false},
		{"dns:///workspace", false},
		{"dns://10.0.0.10/workspace:9090", true},
		{"dns:///workspace:9090/x", false},
		{"dns:///workspace:0", false},
		{"dns:///workspace:http", false},
		{"dns://resolver:x/workspace:9090", false},
		{"unix:///run/workspace.sock", false},
	} {
		r := envconfig.FromMap(map[string]string{"WORKSPACE_SERVICE_ADDR": c.value})
		got := grpcmw.ReadTarget(r, "WORKSPACE_SERVICE_ADDR", "127.0.0.1:9090")
		if ok := r.Err() == nil; ok != c.ok || ok && got != c.value {
			t.Errorf("ReadTarget(%q) = %q, %v; want ok %v", c.value, got, r.Err(), c.ok)
		}
	}
	r := envconfig.FromMap(nil)
	if got := grpcmw.ReadTarget(r, "AUTH_SERVICE_ADDR", ""); got != "" || r.Err() != nil {
		t.Errorf("an unset optional target = %q, %v; want none", got, r.Err())
	}
}

// replica is a workspace service on a loopback address that answers
// GetWorkspace with its own name, or fails it with the code in failWith.
type replica struct {
	workspacev1.UnimplementedWorkspaceServiceServer
	name     string
	addr     string
	served   atomic.Int64
	calls    chan struct{}               // one send per call, while there is room
	failWith atomic.Int32                // a codes.Code; OK: answer
	refusal  atomic.Pointer[fault.Error] // when set, the answer
	srv      *grpc.Server
	stopped  chan struct{}
}

func (r *replica) GetWorkspace(context.Context, *workspacev1.GetWorkspaceRequest) (*workspacev1.Workspace, error) {
	r.served.Add(1)
	select {
	case r.calls <- struct{}{}:
	default:
	}
	if c := codes.Code(r.failWith.Load()); c != codes.OK {
		return nil, status.Error(c, "failing on purpose")
	}
	if e := r.refusal.Load(); e != nil {
		return nil, e
	}
	return &workspacev1.Workspace{Id: r.name}, nil
}

func (r *replica) CreateWorkspaceKey(context.Context, *workspacev1.CreateWorkspaceKeyRequest) (*workspacev1.KeyPair, error) {
	r.served.Add(1)
	return nil, status.Error(codes.Code(r.failWith.Load()), "failing on purpose")
}

// startReplica serves a replica on host (a loopback address), with the
// servers' options and error interceptor of production but for the
// connections' age.
func startReplica(t *testing.T, host string, age grpcmw.ServerSettings) *replica {
	t.Helper()
	lis, err := net.Listen("tcp", net.JoinHostPort(host, "0"))
	if err != nil {
		t.Fatal(err)
	}
	r := &replica{name: host, addr: lis.Addr().String(), srv: grpc.NewServer(append(grpcmw.ServerTransportOptions(age), grpc.UnaryInterceptor(grpcmw.ErrorInterceptor(slog.New(slog.DiscardHandler), time.Minute)))...), stopped: make(chan struct{}), calls: make(chan struct{}, 100_000)}
	workspacev1.RegisterWorkspaceServiceServer(r.srv, r)
	go func() {
		defer close(r.stopped)
		_ = r.srv.Serve(lis)
	}()
	t.Cleanup(func() {
		r.srv.Stop()
		<-r.stopped
	})
	return r
}

// balancedClient dials the replicas through a resolver the test controls,
// with the dial options of production.
// setup, when given, sets the resolver up before the channel builds it.
func balancedClient(t *testing.T, setup func(*manual.Resolver), replicas ...*replica) (workspacev1.WorkspaceServiceClient, *manual.Resolver) {
	t.Helper()
	res := manual.NewBuilderWithScheme("test")
	if setup != nil {
		setup(res)
	}
	res.InitialState(resolver.State{Addresses: addresses(replicas...)})
	conn, err := grpc.NewClient("test:///workspace", append(grpcmw.DialOptions(workspacev1.WorkspaceService_ServiceDesc.ServiceName),
		grpc.WithTransportCredentials(insecure.NewCredentials()), grpc.WithResolvers(res))...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	return workspacev1.NewWorkspaceServiceClient(conn), res
}

func addresses(replicas ...*replica) []resolver.Address {
	var addrs []resolver.Address
	for _, r := range replicas {
		addrs = append(addrs, resolver.Address{Addr: r.addr})
	}
	return addrs
}

var forever = grpcmw.ServerSettings{MaxConnectionAge: time.Hour, MaxConnectionAgeGrace: time.Hour}

// callUntil calls GetWorkspace until done says so or the deadline passes,
// and returns how many calls each replica answered.
func callUntil(t *testing.T, client workspacev1.WorkspaceServiceClient, done func(answered map[string]int) bool) map[string]int {
	t.Helper()
	answered := map[string]int{}
	deadline := time.Now().Add(20 * time.Second)
	for !done(answered) {
		if time.Now().After(deadline) {
			t.Fatalf("gave up after 20 s: answers by replica %v", answered)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		w, err := client.GetWorkspace(ctx, &workspacev1.GetWorkspaceRequest{Id: "x"})
		cancel()
		if err != nil {
			t.Fatalf("GetWorkspace: %v (answers so far %v)", err, answered)
		}
		answered[w.GetId()]++
	}
	return answered
}

func TestCallsAreSpreadOverEveryReplica(t *testing.T) {
	a, b, c := startReplica(t, "127.0.0.1", forever), startReplica(t, "127.0.0.2", forever), startReplica(t, "127.0.0.3", forever)
	client, _ := balancedClient(t, nil, a, b, c)
	// Once every connection is up, round_robin takes each replica in turn.
	callUntil(t, client, func(m map[string]int) bool { return len(m) == 3 })
	got := callUntil(t, client, func(m map[string]int) bool { return m["127.0.0.1"]+m["127.0.0.2"]+m["127.0.0.3"] == 300 })
	for _, r := range []*replica{a, b, c} {
		if n := got[r.name]; n != 100 {
			t.Errorf("replica %s answered %d of 300 calls, want 100 (all: %v)", r.name, n, got)
		}
	}
}

func TestAReplicaAddedIsFoundWhenConnectionsAge(t *testing.T) {
	// Production's age is 30 s; the mechanism is the same at 200 ms.
	age := grpcmw.ServerSettings{MaxConnectionAge: 200 * time.Millisecond, MaxConnectionAgeGrace: time.Second}
	a, b := startReplica(t, "127.0.0.1", age), startReplica(t, "127.0.0.2", age)
	// A resolver only tells the channel what it finds when asked to
	// resolve again, which a connection going away does; the manual
	// resolver stands for DNS, answering with b once b is "added".
	var added atomic.Bool
	withB := make(chan struct{})
	client, res := balancedClient(t, func(res *manual.Resolver) {
		res.ResolveNowCallback = func(resolver.ResolveNowOptions) {
			if added.Load() {
				select {
				case withB <- struct{}{}:
				default:
				}
			}
		}
	}, a)
	callUntil(t, client, func(m map[string]int) bool { return m[a.name] > 0 })
	if got := callUntil(t, client, func(m map[string]int) bool { return m[a.name] >= 20 }); got[b.name] != 0 {
		t.Fatalf("b answered before it was resolved: %v", got)
	}
	added.Store(true)
	select {
	case <-withB:
	case <-time.After(20 * time.Second):
		t.Fatal("the channel did not resolve again within 20 s of its connection's age")
	}
	res.UpdateState(resolver.State{Addresses: addresses(a, b)})
	callUntil(t, client, func(m map[string]int) bool { return m[b.name] > 0 })
}

func TestAKilledReplicaCostsOnlyItsCallsInFlight(t *testing.T) {
	a, b := startReplica(t, "127.0.0.1", forever), startReplica(t, "127.0.0.2", forever)
	client, _ := balancedClient(t, nil, a, b)
	callUntil(t, client, func(m map[string]int) bool { return len(m) == 2 })
	for len(a.calls) > 0 {
		<-a.calls
	}

	// Calls run from 8 goroutines while b stops at once (its connections
	// closed under the calls, as a SIGKILL does). GetWorkspace is
	// idempotent: a call b never answered is tried again on a.
	var wg sync.WaitGroup
	var failed atomic.Int64
	stop := make(chan struct{})
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
				_, err := client.GetWorkspace(ctx, &workspacev1.GetWorkspaceRequest{Id: "x"})
				cancel()
				if err != nil {
					failed.Add(1)
				}
			}
		}()
	}
	a.waitCalls(t, 200)
	b.srv.Stop()
	a.waitCalls(t, 500)
	close(stop)
	wg.Wait()
	if n := failed.Load(); n != 0 {
		t.Errorf("%d idempotent calls failed while a replica stopped, want 0", n)
	}
}

// waitCalls waits for the replica to answer n more calls.
func (r *replica) waitCalls(t *testing.T, n int) {
	t.Helper()
	timeout := time.After(20 * time.Second)
	for i := range n {
		select {
		case <-r.calls:
		case <-timeout:
			t.Fatalf("replica %s answered %d of %d calls within 20 s", r.name, i, n)
		}
	}
}

func TestOnlyIdempotentMethodsAreRetried(t *testing.T) {
	a := startReplica(t, "127.0.0.1", forever)
	client, _ := balancedClient(t, nil, a)
	callUntil(t, client, func(m map[string]int) bool { return m[a.name] > 0 })

	a.failWith.Store(int32(codes.Unavailable))
	for _, c := range []struct {
		name  string
		call  func(context.Context) error
		tries int64
	}{
		{"GetWorkspace (NO_SIDE_EFFECTS)", func(ctx context.Context) error {
			_, err := client.GetWorkspace(ctx, &workspacev1.GetWorkspaceRequest{Id: "x"})
			return err
		}, 3},
		{"CreateWorkspaceKey", func(ctx context.Context) error {
			_, err := client.CreateWorkspaceKey(ctx, &workspacev1.CreateWorkspaceKeyRequest{Id: "x"})
			return err
		}, 1},
	} {
		before := a.served.Load()
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		err := c.call(ctx)
		cancel()
		// The caller sees the service's own status, whatever the retries.
		if st, _ := status.FromError(err); st.Code() != codes.Unavailable || st.Message() != "failing on purpose" {
			t.Errorf("%s: %v, want UNAVAILABLE: failing on purpose", c.name, err)
		}
		if got := a.served.Load() - before; got != c.tries {
			t.Errorf("%s was tried %d times, want %d", c.name, got, c.tries)
		}
	}
}

// A service that says when to come back is not asked again sooner: the
// client does not retry an unavailability with a delay, even of an
// idempotent method, nor a platform's refusal, and retries one without.
func TestAnUnavailabilityThatSaysWhenIsNotRetried(t *testing.T) {
	a := startReplica(t, "127.0.0.1", forever)
	client, _ := balancedClient(t, nil, a)
	callUntil(t, client, func(m map[string]int) bool { return m[a.name] > 0 })

	for _, c := range []struct {
		name    string
		refusal *fault.Error
		tries   int64
	}{
		{"with a delay", &fault.Error{Kind: fault.Unavailable, Message: "busy", RetryAfter: 7 * time.Second}, 1},
		{"without", &fault.Error{Kind: fault.Unavailable, Message: "busy"}, 3},
		{"from a platform", &fault.Error{Kind: fault.BadGateway, Message: "busy"}, 1},
	} {
		a.refusal.Store(c.refusal)
		before := a.served.Load()
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		_, err := client.GetWorkspace(ctx, &workspacev1.GetWorkspaceRequest{Id: "x"})
		cancel()
		if st, _ := status.FromError(err); st.Code() != codes.Unavailable || st.Message() != "busy" {
			t.Errorf("%s: %v, want UNAVAILABLE: busy", c.name, err)
		}
		if got := a.served.Load() - before; got != c.tries {
			t.Errorf("an unavailability %s was tried %d times, want %d", c.name, got, c.tries)
		}
	}
}

func TestReadSettings(t *testing.T) {
	r := envconfig.FromMap(nil)
	if s := grpcmw.ReadServerSettings(r); s.MaxConnectionAge != 30*time.Second || s.MaxConnectionAgeGrace != 10*time.Second {
		t.Errorf("server defaults = %+v", s)
	}
	if s := grpcmw.ReadClientSettings(r); s.MinResolutionInterval != 30*time.Second {
		t.Errorf("client defaults = %+v", s)
	}
	r = envconfig.FromMap(map[string]string{"GRPC_MAX_CONNECTION_AGE": "2m", "GRPC_MAX_CONNECTION_AGE_GRACE": "0s"})
	if s := grpcmw.ReadServerSettings(r); s.MaxConnectionAge != 2*time.Minute || r.Err() == nil {
		t.Errorf("ReadServerSettings = %+v, %v; want the age read and the grace refused", s, r.Err())
	}
}
