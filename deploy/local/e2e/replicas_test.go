package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/fieldmaskpb"

	"github.com/liveproctor/workspaces/deploy/local/stack"
	"github.com/liveproctor/workspaces/pkg/basicauth"
	authv1 "github.com/liveproctor/workspaces/pkg/gen/auth/v1"
	workspacev1 "github.com/liveproctor/workspaces/pkg/gen/workspace/v1"
	"github.com/liveproctor/workspaces/pkg/testenv"
)

// Every service scales out. These tests run stacks of their own
// with two replicas of the workspace and auth services, which the services
// find by name (stack.Replicas: a DNS server answering each name with every
// replica, as a headless Service does), and two gateways, which the tests
// call directly. How many calls each replica served is read from its
// metrics (grpc_server_handling_seconds_count).

const (
	loginMethod = "/auth.v1.AuthService/CreateSdkToken"
	getMethod   = "/workspace.v1.WorkspaceService/GetWorkspace"
)

func startReplicatedStack(t *testing.T) *stack.Stack {
	t.Helper()
	return startOwnStackWith(t, stack.Options{Replicas: stack.Replicas{Workspace: 2, Auth: 2, Gateway: 2}})
}

// at returns c calling the gateway g.
func (c client) at(g *stack.Replica) client { c.gateway = "http://" + g.Addr; return c }

// served returns how many calls of method r has served, whatever their
// status.
func served(t *testing.T, r *stack.Replica, method string) int {
	t.Helper()
	n, err := r.Served(context.Background(), method)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// servedBy returns served for each replica of service, by name.
func servedBy(t *testing.T, s *stack.Stack, service, method string) map[string]int {
	t.Helper()
	out := map[string]int{}
	for _, r := range s.Replicas(service) {
		out[r.Name] = served(t, r, method)
	}
	return out
}

// wantFairShares checks that the replicas of service served the total
// calls of method made since before, between them, and each at least half
// of an even share: round robin gives each an even share, give or take
// the moments a connection is renewed (every GRPC_MAX_CONNECTION_AGE).
func wantFairShares(t *testing.T, s *stack.Stack, service, method string, before map[string]int, total int) {
	t.Helper()
	after := servedBy(t, s, service, method)
	sum, shares := 0, map[string]int{}
	for name, n := range after {
		shares[name] = n - before[name]
		sum += shares[name]
	}
	t.Logf("%s: %d calls of %s served by %v", service, total, method, shares)
	if sum != total {
		t.Errorf("%s: the replicas served %d calls of %s, want %d", service, sum, method, total)
	}
	for name, n := range shares {
		if n < total/(2*len(after)) {
			t.Errorf("%s served %d of %d calls of %s: less than half of an even share", name, n, total, method)
		}
	}
}

// exchange is what one REST call got, for calls made off the test's
// goroutine.
type exchange struct {
	status int
	body   []byte
	err    error // no answer
}

func (e exchange) String() string {
	if e.err != nil {
		return e.err.Error()
	}
	return fmt.Sprintf("%d %s", e.status, e.body)
}

// loadHTTP keeps connections to the gateways across calls under load.
var loadHTTP = &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{MaxIdleConnsPerHost: 32}}

// send is c.do for any goroutine: the exchange is held to the served
// document (with t.Errorf), and a call that got no answer is returned as
// such instead of ending the test.
func (c client) send(method, path string, body any, headers ...string) exchange {
	var data []byte
	if body != nil {
		var err error
		if data, err = json.Marshal(body); err != nil {
			return exchange{err: err}
		}
	}
	req, err := http.NewRequest(method, c.gateway+path, bytes.NewReader(data))
	if err != nil {
		return exchange{err: err}
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	req.SetBasicAuth(c.key, c.secret)
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	resp, err := loadHTTP.Do(req)
	if err != nil {
		return exchange{err: err}
	}
	defer resp.Body.Close()
	answer, err := io.ReadAll(resp.Body)
	if err != nil {
		return exchange{err: err}
	}
	apiDoc.check(c.t, req, resp.StatusCode, resp.Header, answer)
	return exchange{status: resp.StatusCode, body: answer}
}

// dialReplica connects to one replica alone, not through its service's
// name.
func dialReplica(t *testing.T, r *stack.Replica) *grpc.ClientConn {
	t.Helper()
	conn, err := grpc.NewClient("passthrough:///"+r.Addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	return conn
}

// outgoing is the context of one direct call with the given credentials,
// bounded.
func outgoing(authorization string) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	return metadata.AppendToOutgoingContext(ctx, "authorization", authorization), cancel
}

// Calls through either gateway reach every replica, each getting its
// share; a replica started later gets calls within seconds; and a replica
// killed under load costs only the calls it was serving.
func TestReplicasShareCallsTakeANewOneAndSurviveACrash(t *testing.T) {
	s := startReplicatedStack(t)
	gateways := s.Replicas("gateway")
	w := asRoot(t).at(gateways[0]).create(unique(t, "w"), nil)
	key := w.server(t)
	path := "/api/workspace/" + w.WorkspaceID
	login := map[string]any{"email": "ada@example.com", "workspaceId": w.WorkspaceID}

	// Logins and reads through both gateways: each replica of the service
	// behind them serves its share.
	logins, gets := servedBy(t, s, "auth", loginMethod), servedBy(t, s, "workspace", getMethod)
	const rounds = 50
	for range rounds {
		for _, g := range gateways {
			key.at(g).post("/api/login/sdk", login).ok(nil)
			key.at(g).get(path).ok(nil)
		}
	}
	wantFairShares(t, s, "auth", loginMethod, logins, rounds*len(gateways))
	wantFairShares(t, s, "workspace", getMethod, gets, rounds*len(gateways))

	// A replica of each service added now gets calls once the clients
	// resolve the names again, which the servers' connection age makes
	// them do.
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	added := map[string]*stack.Replica{}
	for _, service := range []string{"workspace", "auth"} {
		r, err := s.AddReplica(ctx, service)
		if err != nil {
			t.Fatal(err)
		}
		added[service] = r
	}
	start := time.Now()
	testenv.Eventually(t, 30*time.Second, func() error {
		for _, g := range gateways {
			key.at(g).post("/api/login/sdk", login).ok(nil)
			key.at(g).get(path).ok(nil)
		}
		if n := served(t, added["auth"], loginMethod); n == 0 {
			return fmt.Errorf("%s has served no login", added["auth"].Name)
		}
		if n := served(t, added["workspace"], getMethod); n == 0 {
			return fmt.Errorf("%s has served no read", added["workspace"].Name)
		}
		return nil
	}, "the added replicas get calls")
	t.Logf("the added replicas got calls %s after they were named", time.Since(start).Round(time.Millisecond))

	killUnderLoad(t, s, key, path, login)
}

// killUnderLoad kills a replica of each service, the workspace's then the
// auth service's, while workers call both gateways in a loop, logins and
// reads in turn.
//
// The bounds: each worker has one call in flight at a time, so at most
// `workers` calls can be on a replica when it dies, and only those may
// fail; every call after it goes to the replicas left (the clients drop a
// connection that breaks at once, and grpc-go retries a call that never
// reached the server). Every call the workspace replica serves in this
// load is idempotent (GetWorkspace, Authenticate, GetWorkspaceStatus) and
// retried on UNAVAILABLE, so its death may cost none; a login in flight on
// the auth replica (CreateSdkToken, not retried) may fail, so its death
// may cost up to `workers`. A failure counts against the replica whose
// kill began last before it ended.
func killUnderLoad(t *testing.T, s *stack.Stack, key client, path string, login map[string]any) {
	const (
		workers        = 8
		callsPerWorker = 400 // a bound; the load is stopped long before
	)
	gateways := s.Replicas("gateway")
	victims := []struct {
		replica *stack.Replica
		method  string
	}{{s.Replicas("workspace")[0], getMethod}, {s.Replicas("auth")[0], loginMethod}}

	var mu sync.Mutex
	var failures [][]string // by victim: those that ended after its kill
	var succeeded, answered atomic.Int64
	var killed atomic.Int64 // victims killed so far
	ctx, stop := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	defer func() { stop(); wg.Wait() }()
	for worker := range workers {
		wg.Go(func() {
			for i := 0; i < callsPerWorker && ctx.Err() == nil; i++ {
				c := key.at(gateways[(worker+i)%len(gateways)])
				var e exchange
				if i%2 == 0 {
					e = c.send(http.MethodPost, "/api/login/sdk", login)
				} else {
					e = c.send(http.MethodGet, path, nil)
				}
				answered.Add(1)
				if e.status == http.StatusOK {
					succeeded.Add(1)
					continue
				}
				mu.Lock()
				k := int(killed.Load())
				for len(failures) <= k {
					failures = append(failures, nil)
				}
				failures[k] = append(failures[k], e.String())
				mu.Unlock()
			}
		})
	}

	for _, v := range victims {
		// The victim is serving the load when it dies.
		before := served(t, v.replica, v.method)
		testenv.Eventually(t, 10*time.Second, func() error {
			if served(t, v.replica, v.method) == before {
				return fmt.Errorf("%s serves no calls", v.replica.Name)
			}
			return nil
		}, "%s serves the load", v.replica.Name)
		// Failures count against this victim from the moment it may die:
		// KillReplica returns after the process has exited, and the calls
		// it had in flight may fail before that.
		killed.Add(1)
		if err := s.KillReplica(v.replica); err != nil {
			t.Fatal(err)
		}
		after := succeeded.Load()
		testenv.Eventually(t, 30*time.Second, func() error {
			if n := succeeded.Load() - after; n < 200 {
				return fmt.Errorf("%d calls succeeded", n)
			}
			return nil
		}, "the load goes on after %s was killed", v.replica.Name)
	}
	stop()
	wg.Wait()

	for len(failures) <= len(victims) {
		failures = append(failures, nil)
	}
	if len(failures[0]) > 0 {
		t.Errorf("%d calls failed before any replica was killed: %.300s", len(failures[0]), failures[0][0])
	}
	for k, v := range victims {
		bound := 0 // the workspace replica's calls are all retried
		if v.replica.Service == "auth" {
			bound = workers
		}
		failed := failures[k+1]
		t.Logf("%s killed: %d calls failed (bound %d) of %d under load", v.replica.Name, len(failed), bound, answered.Load())
		for i, f := range failed {
			if i == 10 {
				t.Logf("... and %d more", len(failed)-10)
				break
			}
			t.Logf("failed: %.300s", f)
		}
		if len(failed) > bound {
			t.Errorf("%d calls failed after %s was killed; at most %d may", len(failed), v.replica.Name, bound)
		}
	}
}

// A change made through one replica takes effect on every replica within a
// second: a revoked key pair, a deleted workspace (its key pairs and its
// tokens) and a logged-out user are refused through each gateway and by
// each replica of the services called directly, every one of which used
// the credentials just before the change (so whatever it keeps of them is
// warm). The time until each refuses is measured, and a refusal later
// than a second fails the test.
func TestReplicasRefuseChangesWithinASecond(t *testing.T) {
	s := startReplicatedStack(t)
	p := newProbing(t, s)
	root := asRoot(t).at(p.gateways[0])
	other := p.gateways[1] // the changes are made through the other gateway

	t.Run("revoked key pair", func(t *testing.T) {
		w := root.withT(t).create(unique(t, "w"), nil)
		k := w.server(t).at(p.gateways[0]).createKey(w.WorkspaceID, "replicas", restTag)
		refusedEverywhere(t, p.keyProbes(t, k.AppKey, k.AppSecret, w.WorkspaceID), func() {
			w.server(t).at(other).delete(keysPath(w.WorkspaceID) + "/" + k.AppKey).ok(nil)
		})
	})
	t.Run("deleted workspace", func(t *testing.T) {
		d := root.withT(t).create(unique(t, "d"), nil)
		token := d.server(t).at(p.gateways[0]).login("ada@example.com", d.WorkspaceID).Auth
		probes := append(p.keyProbes(t, d.AppKeys.Server.ConsumerKey, d.AppKeys.Server.SharedSecret, d.WorkspaceID),
			p.tokenProbes(t, token)...)
		refusedEverywhere(t, probes, func() {
			asRoot(t).at(other).delete("/api/workspace/" + d.WorkspaceID).ok(nil)
		})
	})
	t.Run("logged-out user", func(t *testing.T) {
		u := root.withT(t).create(unique(t, "u"), nil)
		token := u.server(t).at(p.gateways[0]).login("bob@example.com", u.WorkspaceID).Auth
		refusedEverywhere(t, p.tokenProbes(t, token), func() {
			u.server(t).at(other).post("/api/logout/sdk", map[string]any{"email": "bob@example.com", "workspaceId": u.WorkspaceID}).ok(nil)
		})
	})
}

// probing holds the places a credential is checked: the gateways, and a
// connection to each replica of the services.
type probing struct {
	gateways  []*stack.Replica
	workspace map[string]workspacev1.WorkspaceServiceClient // by replica name
	auth      map[string]authv1.AuthServiceClient
}

func newProbing(t *testing.T, s *stack.Stack) *probing {
	p := &probing{gateways: s.Replicas("gateway"), workspace: map[string]workspacev1.WorkspaceServiceClient{}, auth: map[string]authv1.AuthServiceClient{}}
	for _, r := range s.Replicas("workspace") {
		p.workspace[r.Name] = workspacev1.NewWorkspaceServiceClient(dialReplica(t, r))
	}
	for _, r := range s.Replicas("auth") {
		p.auth[r.Name] = authv1.NewAuthServiceClient(dialReplica(t, r))
	}
	return p
}

// probe is one check of a credential, in one place.
type probe struct {
	where string
	check func() verdict
}

// verdict is what a probe got: the credential accepted, refused (401 or
// 404, UNAUTHENTICATED or NOT_FOUND), or neither, which is an error.
type verdict struct {
	accepted, refused bool
	answer            string
}

func restVerdict(r *response) verdict {
	return verdict{
		accepted: r.status == http.StatusOK,
		refused:  r.status == http.StatusUnauthorized || r.status == http.StatusNotFound,
		answer:   fmt.Sprintf("%d %.300s", r.status, r.body),
	}
}

func grpcVerdict(err error) verdict {
	code := status.Code(err)
	return verdict{accepted: code == codes.OK, refused: code == codes.Unauthenticated || code == codes.NotFound, answer: fmt.Sprint(err)}
}

// grpcCall makes one direct call with the given credentials.
func grpcCall(authorization string, call func(context.Context) error) verdict {
	ctx, cancel := outgoing(authorization)
	defer cancel()
	return grpcVerdict(call(ctx))
}

// keyProbes check a key pair: a read of its workspace and a login through
// each gateway, a read on each workspace replica, a login on each auth
// replica.
func (p *probing) keyProbes(t *testing.T, key, secret, workspaceID string) []probe {
	c := as(t, key, secret)
	authorization := basicauth.Header(key, secret)
	login := map[string]any{"email": "ada@example.com", "workspaceId": workspaceID}
	var probes []probe
	for _, g := range p.gateways {
		probes = append(probes,
			probe{"a read through " + g.Name, func() verdict { return restVerdict(c.at(g).get("/api/workspace/" + workspaceID)) }},
			probe{"a login through " + g.Name, func() verdict { return restVerdict(c.at(g).post("/api/login/sdk", login)) }})
	}
	for name, ws := range p.workspace {
		probes = append(probes, probe{"GetWorkspace on " + name, func() verdict {
			return grpcCall(authorization, func(ctx context.Context) error {
				_, err := ws.GetWorkspace(ctx, &workspacev1.GetWorkspaceRequest{Id: workspaceID})
				return err
			})
		}})
	}
	for name, auth := range p.auth {
		probes = append(probes, probe{"CreateSdkToken on " + name, func() verdict {
			return grpcCall(authorization, func(ctx context.Context) error {
				_, err := auth.CreateSdkToken(ctx, &authv1.CreateSdkTokenRequest{Email: "ada@example.com", WorkspaceId: workspaceID})
				return err
			})
		}})
	}
	return probes
}

// tokenProbes check a token: its session through each gateway and on each
// auth replica.
func (p *probing) tokenProbes(t *testing.T, token string) []probe {
	var probes []probe
	for _, g := range p.gateways {
		probes = append(probes, probe{"the session through " + g.Name, func() verdict {
			return restVerdict(anonymous(t).at(g).do(http.MethodGet, "/api/sdk/session", nil, "Authorization", "Bearer "+token))
		}})
	}
	for name, auth := range p.auth {
		probes = append(probes, probe{"GetSdkSession on " + name, func() verdict {
			return grpcCall("Bearer "+token, func(ctx context.Context) error {
				_, err := auth.GetSdkSession(ctx, &authv1.GetSdkSessionRequest{})
				return err
			})
		}})
	}
	return probes
}

const (
	// refusalBound is how soon after a change every replica must refuse.
	refusalBound = time.Second
	// refusalWait is how long a probe is watched, to tell how late a late
	// refusal is: past the services' cache lifetimes (5 s and 10 s).
	refusalWait = 12 * time.Second
	// refusalStreak is how many refusals in a row count as refused: a
	// gateway spreads its calls over the replicas behind it, and four in a
	// row reach each of two replicas twice.
	refusalStreak = 4
	// refusalPoll spaces the rounds of probes: fine enough to measure
	// against refusalBound, without flooding the stack while a late
	// refusal is waited for.
	refusalPoll = 50 * time.Millisecond
)

// refusedEverywhere checks that every probe accepts the credential, makes
// the change, then polls the probes until each has refused refusalStreak
// times in a row, and fails for each whose streak began more than
// refusalBound after the change.
func refusedEverywhere(t *testing.T, probes []probe, change func()) {
	t.Helper()
	for _, p := range probes {
		if v := p.check(); !v.accepted {
			t.Fatalf("before the change, %s: %s", p.where, v.answer)
		}
	}
	change()
	changed := time.Now()
	since := make([]time.Duration, len(probes)) // when the streak of refusals began
	streak := make([]int, len(probes))
	rounds := time.NewTicker(refusalPoll)
	defer rounds.Stop()
	for done := false; !done && time.Since(changed) < refusalWait; <-rounds.C {
		done = true
		for i, p := range probes {
			if streak[i] >= refusalStreak {
				continue
			}
			v, at := p.check(), time.Since(changed)
			switch {
			case v.refused:
				if streak[i] == 0 {
					since[i] = at
				}
				streak[i]++
			case v.accepted:
				streak[i] = 0
			default:
				t.Fatalf("%s answered %s", p.where, v.answer)
			}
			done = done && streak[i] >= refusalStreak
		}
	}
	for i, p := range probes {
		switch {
		case streak[i] < refusalStreak:
			t.Errorf("%s: still accepted %s after the change", p.where, refusalWait)
		case since[i] > refusalBound:
			t.Errorf("%s: refused only %s after the change, want within %s", p.where, since[i].Round(time.Millisecond), refusalBound)
		default:
			t.Logf("%s: refused %s after the change", p.where, since[i].Round(time.Millisecond))
		}
	}
}

// Of two updates of one workspace with the same If-Match, made at once on
// the two workspace replicas, exactly one applies and the other is refused
// (412, FAILED_PRECONDITION over gRPC), round after round: over gRPC to
// each replica in turn with REST through each gateway.
func TestReplicasIfMatchHasOneWinner(t *testing.T) {
	s := startReplicatedStack(t)
	gateways := s.Replicas("gateway")
	root := asRoot(t).at(gateways[0])
	w := root.create(unique(t, "w"), nil)
	path := "/api/workspace/" + w.WorkspaceID
	var replicas []workspacev1.WorkspaceServiceClient
	for _, r := range s.Replicas("workspace") {
		replicas = append(replicas, workspacev1.NewWorkspaceServiceClient(dialReplica(t, r)))
	}
	authorization := basicauth.Header(rootKey, rootSecret)

	const rounds = 10
	for round := range rounds {
		var before workspace
		root.get(path).ok(&before)
		names := []string{fmt.Sprintf("Round %d one", round), fmt.Sprintf("Round %d two", round)}
		won, lost := make([]bool, len(names)), make([]bool, len(names))
		answers := make([]string, len(names))
		start := make(chan struct{})
		var wg sync.WaitGroup
		for i := range names {
			wg.Go(func() {
				<-start
				if round%2 == 0 {
					ctx, cancel := outgoing(authorization)
					defer cancel()
					_, err := replicas[i%len(replicas)].UpdateWorkspace(ctx, &workspacev1.UpdateWorkspaceRequest{
						Id: w.WorkspaceID, Name: &names[i], Etag: before.Etag,
						UpdateMask: &fieldmaskpb.FieldMask{Paths: []string{"name"}},
					})
					code := status.Code(err)
					won[i], lost[i], answers[i] = code == codes.OK, code == codes.FailedPrecondition, fmt.Sprint(err)
					return
				}
				e := asRoot(t).at(gateways[i%len(gateways)]).send(http.MethodPut, path, map[string]any{"name": names[i]}, "If-Match", before.Etag)
				won[i], lost[i], answers[i] = e.status == http.StatusOK, e.status == http.StatusPreconditionFailed, e.String()
			})
		}
		close(start)
		wg.Wait()

		var winners []string
		for i := range names {
			switch {
			case won[i]:
				winners = append(winners, names[i])
			case !lost[i]:
				t.Errorf("round %d: an update answered %s", round, answers[i])
			}
		}
		var after workspace
		root.get(path).ok(&after)
		if len(winners) != 1 {
			t.Errorf("round %d: %d updates applied with one etag (%q), want 1; the name is now %q", round, len(winners), winners, after.Name)
		} else if after.Name != winners[0] {
			t.Errorf("round %d: %q applied, but the name is now %q", round, winners[0], after.Name)
		}
	}
}
