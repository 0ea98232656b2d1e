package main

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/liveproctor/workspaces/pkg/clip"
)

// report is everything one run measured.
type report struct {
	Date    time.Time
	Machine machine
	Config  config
	Took    time.Duration
	// LoadStart and LoadEnd are the load average (1 min) around the run.
	LoadStart, LoadEnd float64
	// Failed names the scenarios that failed, with why.
	Failed []string

	// LoginRef, LoginFloor and LoginStack have one measurement per round,
	// in order. The floor is benchproxy in front of benchauth.
	LoginRef, LoginFloor, LoginStack []measurement
	MemoryLogin                      []processMemory
	// MakeRunFloor and MakeRunStack are the floor and a stack started as
	// make run starts it (makerun.go), in alternating rounds.
	MakeRunFloor, MakeRunStack []measurement
	// RedisLoginStack, RedisLoginRef and RedisLoginFloor are each side's
	// redis-server command statistics over the login rounds.
	RedisLoginStack, RedisLoginRef, RedisLoginFloor []commandStat
	// KeysRef, KeysFloor and KeysStack are what each side's redis-server
	// holds after the login rounds: mostly the tokens of every login the
	// run made, warm-ups included.
	KeysRef, KeysFloor, KeysStack keyspace
	MemoryEnd                     []processMemory
	Hop                           []hop
	// FrontGateway and FrontProxy are GetWorkspace through the gateway and
	// through benchproxy, driven by wrk in alternating rounds.
	FrontGateway, FrontProxy []measurement
	Introspect               measurement
	Lists                    []listRun
	// ListSkipped has the list's sizes below what the store held already.
	ListSkipped steps
	// Store has the store-scale scenario's steps, in order; StoreSkipped
	// the steps below what the store held already.
	Store        []storeStep
	StoreSkipped steps
	// ReplicaLogins is one login round spread over two auth replicas;
	// NewReplica, how a third one added under load took its share
	// (replicas.go).
	ReplicaLogins      []replicaLogins
	ReplicaLoginErrors int // failed logins of that round, as wrk saw them
	NewReplica         *newReplica
	// LTIFlood is the LTI 1.3 login flood (ltiflood.go).
	LTIFlood *ltiFlood
	// Webhooks is webhook delivery (webhooks.go).
	Webhooks *webhookBench
	// Portal is the administrator's portal's page against its REST route
	// (portal.go).
	Portal *portalBench
}

type processMemory struct {
	Name string
	memory
}

// hop is GetWorkspace at one concurrency, over both paths.
type hop struct {
	Callers int
	// Interleaved: the paths took turns in blocks of hopBlock calls
	// (A B C C B A…) in one run; otherwise in alternating rounds.
	Interleaved bool
	GRPC, REST  measurement
	// Floor is the same call through benchproxy, a bare HTTP front, in
	// the interleaved run.
	Floor *measurement
}

// P50Diff is what the gateway adds at the median.
func (h hop) P50Diff() time.Duration { return h.REST.Percentile(50) - h.GRPC.Percentile(50) }

// FloorP50Diff is what benchproxy adds at the median.
func (h hop) FloorP50Diff() time.Duration { return h.Floor.Percentile(50) - h.GRPC.Percentile(50) }

// listRun is the filtered list at one number of workspaces.
type listRun struct {
	Workspaces int
	growth         // how the store got there
	Returned   int // workspaces on the first page
	List       measurement
}

// The targets the figures are held against: against the floor, the least
// this architecture can do for a login.
const (
	targetLoginCPUFactor = 1.25 // stack's server CPU per login ≤ this × the floor's
	targetP99Factor      = 1.5  // stack's login p99 ≤ this × the floor's, in the bench's stack and make run's
	targetFrontFactor    = 1.1  // gateway's CPU per GetWorkspace ≤ this × benchproxy's
	targetRSS            = 48 << 20
	targetBytesPerToken  = 235 // the stack's redis-server memory per stored token
)

// loadGenerators are the processes that make the load rather than serve it.
var loadGenerators = []string{"bench", "wrk"}

// serverCPU is the CPU time per call of every server process of m (the
// load generators left out), in microseconds.
func serverCPU(m measurement) float64 {
	var used time.Duration
	for _, c := range m.CPU {
		if !slices.Contains(loadGenerators, c.Name) {
			used += c.Used
		}
	}
	return perCall(used, m.Requests)
}

// processCPUPerCall is one process's CPU time per call of m, in
// microseconds.
func processCPUPerCall(m measurement, name string) float64 {
	for _, c := range m.CPU {
		if c.Name == name {
			return perCall(c.Used, m.Requests)
		}
	}
	return 0
}

// LoginRatio is the stack's login throughput over the reference's.
func (r *report) LoginRatio() float64 { return rpsRatio(r.LoginStack, r.LoginRef) }

// cpuRatio is cheap's server CPU per call over dear's, rounds pooled.
func cpuRatio(cheap, dear []measurement) float64 {
	d := serverCPU(pool(dear))
	if d == 0 {
		return 0
	}
	return serverCPU(pool(cheap)) / d
}

// rpsRatio is slow's throughput over fast's, rounds pooled.
func rpsRatio(slow, fast []measurement) float64 {
	f := pool(fast).RPS()
	if f == 0 {
		return 0
	}
	return pool(slow).RPS() / f
}

// p99Factor is how many times slow's pooled p99 is fast's.
func p99Factor(slow, fast []measurement) float64 {
	return float64(pool(slow).Percentile(99)) / float64(max(pool(fast).Percentile(99), 1))
}

// FrontCPUFactor is the gateway's CPU per GetWorkspace over benchproxy's.
func (r *report) FrontCPUFactor() float64 {
	proxy := processCPUPerCall(pool(r.FrontProxy), "benchproxy")
	if proxy == 0 {
		return 0
	}
	return processCPUPerCall(pool(r.FrontGateway), "gateway") / proxy
}

// Markdown renders the report.
func (r *report) Markdown() string {
	var b strings.Builder
	w := func(format string, args ...any) { fmt.Fprintf(&b, format, args...) }
	c := r.Config
	m := r.Machine

	w("# Benchmark results, %s\n\n", r.Date.Format("2006-01-02 15:04 MST"))
	w("- machine: %s, %d cores, %s, Linux %s, %s\n", m.CPU, m.Cores, m.OS, m.Kernel, m.Go)
	w("- settings: rounds of %s, %d rounds of each comparison (login A B C A B C…: reference/floor/stack; GetWorkspace A B A B…: benchproxy/gateway), %s warm-up, %d callers, seeding with %d workers; took %s\n",
		c.Round, c.Rounds, c.Warmup, c.Conns, c.SeedWorkers, r.Took.Round(time.Second))
	w("- HTTP load from wrk (`-t%d -c%d --latency`, a Lua script for the bodies and the Basic header); the gRPC load and the one-caller hop from the Go load generator (the bench process)\n", wrkThreads, c.Conns)
	w("- everything shares this machine: the load generators, FerretDB, redis-server, the three services, benchref, benchauth and benchproxy; load average (1 min) at the start: %.2f, at the end: %.2f\n\n", r.LoadStart, r.LoadEnd)

	if len(c.Only) > 0 {
		w("- only these scenarios ran: %s\n\n", c.Only.String())
	}
	for _, f := range r.Failed {
		w("- **failed, no figures**: %s\n", echoLine(f))
	}
	if len(r.Failed) > 0 {
		w("\n")
	}

	r.writeTargets(w)
	r.writeReplicas(w)
	r.writeLTIFlood(w)
	r.writeWebhooks(w)
	r.writeCPU(w)
	r.writeRedis(w)
	r.writeThroughput(w)
	r.writeHop(w)
	r.writePortal(w)
	r.writeStore(w)
	r.writeMemory(w)
	if len(r.Lists) > 0 || len(r.Store) > 0 {
		w("The list figures are those of the stand-in (FerretDB on SQLite), not of a MongoDB server.\n")
	}
	return b.String()
}

type writer func(format string, args ...any)

func (r *report) writeTargets(w writer) {
	w("## Targets\n\n| target | figure | met |\n|---|---|---|\n")
	if len(r.LoginStack) > 0 && len(r.LoginFloor) > 0 {
		flo, stk := pool(r.LoginFloor), pool(r.LoginStack)
		factor := 1 / cpuRatio(r.LoginFloor, r.LoginStack)
		w("| login: CPU per request of the servers, stack / floor ≤ %.2f | %.3f (%.0f µs / %.0f µs) | %s |\n",
			targetLoginCPUFactor, factor, serverCPU(stk), serverCPU(flo), mark(factor <= targetLoginCPUFactor))
		r.writeP99Target(w, "the bench's stack", r.LoginStack, r.LoginFloor)
	}
	if len(r.MakeRunStack) > 0 {
		r.writeP99Target(w, "make run's stack (Redis persisting, default logging)", r.MakeRunStack, r.MakeRunFloor)
	}
	if len(r.FrontGateway) > 0 {
		gw, px := pool(r.FrontGateway), pool(r.FrontProxy)
		w("| gateway CPU per GetWorkspace ≤ %.2f× benchproxy's, %d connections | %.2f× (%.0f µs / %.0f µs) | %s |\n",
			targetFrontFactor, r.Config.Conns, r.FrontCPUFactor(), processCPUPerCall(gw, "gateway"),
			processCPUPerCall(px, "benchproxy"), mark(r.FrontCPUFactor() > 0 && r.FrontCPUFactor() <= targetFrontFactor))
	}
	for _, p := range r.MemoryLogin {
		if !slices.Contains(services, p.Name) { // the bench's own servers have no bound
			continue
		}
		w("| %s ≤ %s RSS during the login load | %s | %s |\n", p.Name, mib(targetRSS), mib(p.Peak), mark(p.Peak <= targetRSS))
	}
	if k := r.KeysStack; k.Keys > 0 {
		per := float64(k.UsedMemory) / float64(k.Keys)
		w("| the stack's redis-server memory per stored token ≤ %d bytes | %.0f (%d keys, %s) | %s |\n",
			targetBytesPerToken, per, k.Keys, mib(k.UsedMemory), mark(per <= targetBytesPerToken))
	}
	r.writeFloorRatios(w)
	w("\n")
	r.writeTargetNotes(w)
}

// writeP99Target holds one stack's pooled login p99 to the floor's of the
// same rounds.
func (r *report) writeP99Target(w writer, which string, stack, floor []measurement) {
	stk, flo := pool(stack), pool(floor)
	f := p99Factor(stack, floor)
	w("| login p99 at %d connections ≤ %.1f× the floor's, 0 errors: %s | %s vs %s (%.2f×), %d + %d errors | %s |\n",
		r.Config.Conns, targetP99Factor, which, ms(stk.Percentile(99)), ms(flo.Percentile(99)), f, stk.Errors, flo.Errors,
		mark(f <= targetP99Factor && stk.Errors == 0 && flo.Errors == 0))
}

// writeTargetNotes says how the login rounds ran.
func (r *report) writeTargetNotes(w writer) {
	if len(r.LoginStack) == 0 {
		return
	}
	ref, stk := pool(r.LoginRef), pool(r.LoginStack)
	limits := "on (the key pair's rate raised to 1,000,000/s so that the one benchmark pair is not throttled; every call still does the limits' Redis work)"
	if !r.Config.Limits {
		limits = "off (RATE_LIMIT=0, no failure limits): what the limits cost, not the default"
	}
	w("Rate limits: %s. Load average (1 min) at the start of the login rounds: %.2f on average.\n\n",
		limits, (ref.Load+stk.Load)/2)
	w("The floor is benchproxy → benchauth (`deploy/local/cmd/benchproxy`, `deploy/local/cmd/benchauth`), the least the stack's architecture (an HTTP front, one gRPC hop to a token service, Redis) can do for a login; the reference (benchref, one net/http process) is below any such architecture and only informational.\n\n")
}

// writeFloorRatios adds the login floor's ratios, to the reference and to
// the stack, to the targets table: informational, not targets.
func (r *report) writeFloorRatios(w writer) {
	if len(r.LoginFloor) == 0 || len(r.LoginStack) == 0 {
		return
	}
	ref, flo, stk := pool(r.LoginRef), pool(r.LoginFloor), pool(r.LoginStack)
	w("| floor (informational): CPU per request of the servers, reference / floor | %.3f (%.0f µs / %.0f µs) | — |\n",
		cpuRatio(r.LoginRef, r.LoginFloor), serverCPU(ref), serverCPU(flo))
	w("| floor (informational): CPU per request of the servers, floor / stack | %.3f (%.0f µs / %.0f µs) | — |\n",
		cpuRatio(r.LoginFloor, r.LoginStack), serverCPU(flo), serverCPU(stk))
	w("| floor (informational): wrk throughput, floor / reference | %.3f (%.0f / %.0f req/s), %d errors on the floor | — |\n",
		rpsRatio(r.LoginFloor, r.LoginRef), flo.RPS(), ref.RPS(), flo.Errors)
	w("| floor (informational): wrk throughput, stack / floor | %.3f (%.0f / %.0f req/s) | — |\n",
		rpsRatio(r.LoginStack, r.LoginFloor), stk.RPS(), flo.RPS())
	w("| floor (informational): p99, floor vs the reference | %s vs %s (%.2f×) | — |\n",
		ms(flo.Percentile(99)), ms(ref.Percentile(99)), p99Factor(r.LoginFloor, r.LoginRef))
	w("| floor (informational): p99, stack vs the floor | %s vs %s (%.2f×) | — |\n",
		ms(stk.Percentile(99)), ms(flo.Percentile(99)), p99Factor(r.LoginStack, r.LoginFloor))
}

func (r *report) writeThroughput(w writer) {
	w("## Throughput and latency\n\n| scenario | callers | requests | req/s | p50 | p99 | errors | load avg at start |\n|---|--:|--:|--:|--:|--:|--:|--:|\n")
	row := func(name string, m measurement) {
		if m.Result == nil {
			return
		}
		load := ""
		if m.Load > 0 {
			load = fmt.Sprintf("%.2f", m.Load)
		}
		w("| %s | %d | %d | %.0f | %s | %s | %d | %s |\n",
			name, m.Callers, m.Requests, m.RPS(), ms(m.Percentile(50)), ms(m.Percentile(99)), m.Errors, load)
	}
	if len(r.LoginStack) > 0 {
		row(fmt.Sprintf("login, reference (benchref), %d rounds", len(r.LoginRef)), pool(r.LoginRef))
		if len(r.LoginFloor) > 0 {
			row(fmt.Sprintf("login, floor (benchproxy → benchauth), %d rounds", len(r.LoginFloor)), pool(r.LoginFloor))
		}
		row(fmt.Sprintf("login, stack (gateway → auth → workspace), %d rounds", len(r.LoginStack)), pool(r.LoginStack))
	}
	for i := range r.LoginRef {
		row(fmt.Sprintf("  round %d: reference", i+1), r.LoginRef[i])
		if i < len(r.LoginFloor) {
			row(fmt.Sprintf("  round %d: floor", i+1), r.LoginFloor[i])
		}
		row(fmt.Sprintf("  round %d: stack", i+1), r.LoginStack[i])
	}
	for _, h := range r.Hop {
		row("GetWorkspace, direct gRPC", h.GRPC)
		row("GetWorkspace, REST via the gateway", h.REST)
		if h.Floor != nil {
			row("GetWorkspace, REST via benchproxy (the floor)", *h.Floor)
		}
	}
	if len(r.FrontGateway) > 0 {
		row(fmt.Sprintf("GetWorkspace, REST via the gateway (wrk), %d rounds", len(r.FrontGateway)), pool(r.FrontGateway))
		row(fmt.Sprintf("GetWorkspace, REST via benchproxy (wrk), %d rounds", len(r.FrontProxy)), pool(r.FrontProxy))
	}
	row("IntrospectSdkToken, direct gRPC", r.Introspect)
	for _, l := range r.Lists {
		if l.Seed.Result != nil && l.Seed.Requests > 0 {
			row(fmt.Sprintf("seeding: REST create, up to %d workspaces (retried after 503: %d)", min(l.Workspaces, restSeedLimit), l.SeedRetries), l.Seed)
		}
		if l.Copied > 0 {
			w("| seeding: %d copies of a created workspace written straight into the store, in %s | | | | | | |\n",
				l.Copied, l.CopyTook.Round(time.Millisecond))
		}
		row(fmt.Sprintf("list, search \"bench\", page of 100 (%d returned), %d workspaces", l.Returned, l.Workspaces), l.List)
	}
	if len(r.ListSkipped) > 0 {
		w("\nThe list at %s workspaces was skipped: the store held more already (the store-scale table below has the list at each of its steps; `-only list` measures it alone).\n", r.ListSkipped.String())
	}
	if len(r.LoginStack) > 0 {
		w("\nLogin ratio stack/reference (wrk req/s): **%.3f**; floor/reference: %.3f; the login rows are wrk's figures (errors: answers with a status ≥ 400 and socket errors).\n",
			r.LoginRatio(), rpsRatio(r.LoginFloor, r.LoginRef))
	}
	w("\n")
}

func (r *report) writeHop(w writer) {
	if len(r.Hop) == 0 {
		return
	}
	w("## The gateway hop (GetWorkspace)\n\n| callers | how | gRPC p50 | REST p50 | p50 difference | gRPC p99 | REST p99 |\n|--:|---|--:|--:|--:|--:|--:|\n")
	for _, h := range r.Hop {
		how := fmt.Sprintf("%d alternating rounds, pooled", r.Config.Rounds)
		if h.Interleaved {
			how = fmt.Sprintf("interleaved in blocks of %d calls (A B C C B A…)", hopBlock)
		}
		w("| %d | %s | %s | %s | %s | %s | %s |\n", h.Callers, how, ms(h.GRPC.Percentile(50)), ms(h.REST.Percentile(50)),
			signedMS(h.P50Diff()), ms(h.GRPC.Percentile(99)), ms(h.REST.Percentile(99)))
		if h.Floor != nil {
			w("| %d | the floor: benchproxy instead of the gateway, same run | %s | %s | %s | %s | %s |\n", h.Callers,
				ms(h.GRPC.Percentile(50)), ms(h.Floor.Percentile(50)), signedMS(h.FloorP50Diff()),
				ms(h.GRPC.Percentile(99)), ms(h.Floor.Percentile(99)))
		}
	}
	w("\nbenchproxy (`deploy/local/cmd/benchproxy`) is the least an HTTP front of the workspace service can do: one handler that makes the same gRPC call and writes the answer as JSON, without routing table, middleware or logs. What it adds to the direct call is what any HTTP hop costs on this machine; what the gateway adds beyond it is grpc-gateway's and the gateway's own work.\n\n")
}

// writePortal shows the portal's registrations page beside the REST route
// listing the same registrations: each side's throughput, latency, errors
// and CPU per request, rounds pooled and one by one, and the page's cost
// over the route's.
func (r *report) writePortal(w writer) {
	b := r.Portal
	if b == nil || len(b.Page) == 0 {
		return
	}
	c := r.Config
	w("## The administrator's portal: a page against its REST route\n\n")
	w("`GET /portal/registrations` with a portal session's cookie (the gateway asks the workspace service for the session, with its workspace's name, and for the LTI 1.3 registrations, two gRPC calls each admitted by the session, and renders the page) against `GET /api/workspace/{id}/lti/registrations` with the workspace's server key pair (one call, the same registrations as JSON): %d registrations, %d deployments in all. wrk at %d connections, rounds of %s alternating (A B A B…: the REST route, the page) after a warm-up of each. Errors are answers of 400 or more (neither route answers a GET with a redirect) and socket errors; the scenario fails on any, and names a session that has ended (401).\n\n",
		b.Registrations, b.Deployments, c.Conns, c.Round)
	w("| side | requests | req/s | p50 | p90 | p99 | max | errors | **servers, µs per request** | %s | load avg |\n|---|--:|--:|--:|--:|--:|--:|--:|--:|%s--:|\n",
		strings.Join(portalProcesses, " | "), strings.Repeat("--:|", len(portalProcesses)))
	row := func(name string, m measurement) {
		cells := make([]string, len(portalProcesses))
		for i, n := range portalProcesses {
			cells[i] = fmt.Sprintf("%.0f", processCPUPerCall(m, n))
		}
		w("| %s | %d | %.0f | %s | %s | %s | %s | %d | **%.0f** | %s | %.2f |\n", name, m.Requests, m.RPS(),
			ms(m.Percentile(50)), ms(m.Percentile(90)), ms(m.Percentile(99)), ms(m.Percentile(100)), m.Errors,
			serverCPU(m), strings.Join(cells, " | "), m.Load)
	}
	row(fmt.Sprintf("the page, %d rounds", len(b.Page)), pool(b.Page))
	row(fmt.Sprintf("the REST route, %d rounds", len(b.REST)), pool(b.REST))
	for i := range b.Page {
		if i < len(b.REST) {
			row(fmt.Sprintf("  round %d: REST route", i+1), b.REST[i])
		}
		row(fmt.Sprintf("  round %d: page", i+1), b.Page[i])
	}
	w("\nThe page costs the servers **%.2f×** the REST route's CPU per request (gateway %.2f×, workspace %.2f×, redis-server %.2f×, ferretdb %.2f×), at %.2f× its throughput. **servers** adds up every process but the load generators (wrk, bench); the CPU clock ticks at 10 ms.\n\n",
		b.CPUFactor(""), b.CPUFactor("gateway"), b.CPUFactor("workspace"), b.CPUFactor("redis-server"), b.CPUFactor("ferretdb"),
		rpsRatio(b.Page, b.REST))
}

// writeStore shows the store-scale scenario: each operation's p50 and p99
// at each step, and for each the largest step at which its p50 met its
// threshold.
func (r *report) writeStore(w writer) {
	if len(r.Store) == 0 {
		return
	}
	c := r.Config
	w("## The store at scale (the embedded stand-in)\n\n")
	w("One caller through the gateway, at each number of workspaces: a filtered list (`POST /api/workspaces`, `%s`) and one with a state filter (`%s`, one workspace in %d matches), an update (`PUT /api/workspace/{id}` with a new name, of a workspace anywhere in the store, a different one each call, spread evenly over it) and a create (`POST /api/workspace`, a new id each call); %d calls of each, or as many as one round (%s) holds, after one uncounted call. The store grows through the REST create route up to %d workspaces (%d workers), then by copies of a created workspace written straight into it; each step's creates stay in it. Workspaces: the bench's, as each step began (the store also holds the root, and the portal scenario's workspace when it ran). Cells: p50 / p99 in ms (calls), ✓ when the p50 is within its threshold.\n\n",
		listBody, stateListBody, stateEvery, c.StoreCalls, c.Round, restSeedLimit, c.SeedWorkers)
	w("| workspaces | list p50 / p99 | state list p50 / p99 | update p50 / p99 | create p50 / p99 | grown by | load avg | time (UTC) |\n|--:|--:|--:|--:|--:|---|--:|---|\n")
	for i := range r.Store {
		s := &r.Store[i]
		cells := make([]string, len(storeOps))
		for j, op := range storeOps {
			cells[j] = storeCell(op.Of(s), op.within(s))
		}
		w("| %d | %s | %s | %.2f | %s |\n", s.Workspaces, strings.Join(cells, " | "), s.grownBy(), s.Load, s.At.Format("15:04:05"))
	}
	w("\n")
	for _, op := range storeOps {
		w("- %s, p50 within %s: %s\n", op.Name, op.Threshold, r.largestWithin(op))
	}
	last := r.Store[len(r.Store)-1]
	if slices.ContainsFunc(storeOps, func(op storeOp) bool { return op.within(&last) }) {
		w("\nThe last step measured was the last of `-store-steps`; larger stores were not measured.\n")
	} else {
		w("\nThe store grew no further: every operation was past its threshold at %d workspaces.\n", last.Workspaces)
	}
	if len(r.StoreSkipped) > 0 {
		w("Skipped, since the store held more workspaces already (the step before and its creates): %s.\n", r.StoreSkipped.String())
	}
	if slices.ContainsFunc(r.Store, func(s storeStep) bool {
		return slices.ContainsFunc(storeOps, func(op storeOp) bool { m := op.Of(&s); return m.Result != nil && m.Errors > 0 })
	}) {
		w("Errors are answers outside 2xx, in practice 503: a create's or update's publish of its event is bounded by 1 s (half of `EVENTS_SETTLE`), and past it the change is stored but answered \"retry shortly\".\n")
	}
	w("The first pages held %d and %d workspaces at the last step. On the stand-in every query but a lone `_id` equality reads and parses the collection's documents in the order they were written (all of them, or up to the first match for a read or write of one document), and one query runs at a time: these figures grow with the store, and would not on MongoDB with the adapter's indexes.\n\n",
		last.Returned, last.StateReturned)
}

// largestWithin says at which of the measured steps op's p50 was within its
// threshold: the largest, every one or none.
func (r *report) largestWithin(op storeOp) string {
	largest := -1
	for i := range r.Store {
		if op.within(&r.Store[i]) {
			largest = i
		}
	}
	switch {
	case largest < 0:
		return fmt.Sprintf("none of the steps (the smallest, %d workspaces: %s)", r.Store[0].Workspaces, ms(op.Of(&r.Store[0]).Percentile(50)))
	case !slices.ContainsFunc(r.Store, func(s storeStep) bool { return !op.within(&s) }):
		return fmt.Sprintf("every step, up to %d workspaces", r.Store[largest].Workspaces)
	}
	s := fmt.Sprintf("the largest step at which it is: **%d workspaces**", r.Store[largest].Workspaces)
	var below []string
	for i := range largest {
		if !op.within(&r.Store[i]) {
			below = append(below, strconv.Itoa(r.Store[i].Workspaces))
		}
	}
	if len(below) > 0 {
		s += fmt.Sprintf(" (though past it at the smaller %s)", strings.Join(below, ", "))
	}
	return s
}

// storeCell is one operation's figures at one step.
func storeCell(m measurement, within bool) string {
	if m.Result == nil || m.Requests == 0 {
		return "—"
	}
	c := fmt.Sprintf("%.1f / %.1f (%d)", msf(m.Percentile(50)), msf(m.Percentile(99)), m.Requests)
	if m.Errors > 0 {
		c += fmt.Sprintf(", %d errors", m.Errors)
	}
	if within {
		c += " ✓"
	}
	return c
}

// grownBy says how the store got to the step's size.
func (s *storeStep) grownBy() string {
	var parts []string
	if s.Seed.Result != nil && s.Seed.Requests > 0 {
		parts = append(parts, fmt.Sprintf("%d REST creates, %.0f/s, %d retried", s.Seed.Requests, s.Seed.RPS(), s.SeedRetries))
	}
	if s.Copied > 0 {
		parts = append(parts, fmt.Sprintf("%d copies in %s", s.Copied, s.CopyTook.Round(100*time.Millisecond)))
	}
	if len(parts) == 0 {
		return "—"
	}
	return strings.Join(parts, "; ")
}

// writeCPU shows where the CPU time of the compared runs went: what each
// process used per call, so the ratio can be read as a cost per request.
func (r *report) writeCPU(w writer) {
	var runs []measurement
	if len(r.LoginStack) > 0 {
		runs = append(runs, pool(r.LoginRef))
		if len(r.LoginFloor) > 0 {
			runs = append(runs, pool(r.LoginFloor))
		}
		runs = append(runs, pool(r.LoginStack))
	}
	if len(r.FrontGateway) > 0 {
		runs = append(runs, pool(r.FrontGateway), pool(r.FrontProxy))
	}
	if p := r.Portal; p != nil && len(p.Page) > 0 {
		runs = append(runs, pool(p.REST), pool(p.Page))
	}
	if len(runs) == 0 {
		return
	}
	names := cpuColumns(runs)
	w("## CPU time per request\n\nMicroseconds of CPU (user + system, from `/proc/<pid>/stat`; wrk's from its own resource usage) each process used during the measured rounds, divided by the requests wrk counted. **servers** adds up every process but the load generators (wrk, and bench, the Go process that runs the benchmark and idles while wrk drives): it does not depend on who makes the load.\n\n")
	w("| scenario | conns | **servers** | %s | total |\n|---|--:|--:|%s--:|\n", strings.Join(names, " | "), strings.Repeat("--:|", len(names)))
	for _, m := range runs {
		used := map[string]time.Duration{}
		var total time.Duration
		for _, c := range m.CPU {
			used[c.Name] = c.Used
			total += c.Used
		}
		cells := make([]string, len(names))
		for i, n := range names {
			cells[i] = fmt.Sprintf("%.0f", perCall(used[n], m.Requests))
		}
		w("| %s | %d | **%.0f** | %s | %.0f |\n", m.Scenario, m.Callers, serverCPU(m), strings.Join(cells, " | "), perCall(total, m.Requests))
	}
	w("\nThe CPU clock ticks at 10 ms, so a process that used little shows coarse figures.\n\n")
}

// writeRedis shows the Redis work of a login on each side, from
// redis-server's own statistics.
func (r *report) writeRedis(w writer) {
	if len(r.LoginStack) == 0 || len(r.RedisLoginStack) == 0 {
		return
	}
	w("## Redis work per login\n\nFrom each redis-server's `INFO commandstats` over the login rounds (reset after the warm-up), divided by the logins: calls and microseconds inside redis-server per login (a script's time includes the commands it ran, which are listed again on their own; reading and writing the sockets is not counted here, only in the CPU table).\n\n")
	w("| side | command | calls per login | µs per login |\n|---|---|--:|--:|\n")
	for _, side := range []struct {
		name  string
		stats []commandStat
		n     int
	}{{"reference", r.RedisLoginRef, pool(r.LoginRef).Requests}, {"floor", r.RedisLoginFloor, pool(r.LoginFloor).Requests},
		{"stack", r.RedisLoginStack, pool(r.LoginStack).Requests}} {
		for _, s := range side.stats {
			if s.Calls == 0 || side.n == 0 {
				continue
			}
			w("| %s | %s | %.2f | %.2f |\n", side.name, s.Command, float64(s.Calls)/float64(side.n), float64(s.Usec)/float64(side.n))
		}
	}
	w("\n")
	r.writeKeyspaces(w)
}

// writeKeyspaces shows what each side's redis-server holds after the
// login rounds: a store of 8-hour tokens grows with every login, so its
// RSS says how many logins the run made as much as how it stores them;
// bytes per key says the latter.
func (r *report) writeKeyspaces(w writer) {
	if r.KeysStack.Keys == 0 {
		return
	}
	w("### What each redis-server holds after the login rounds\n\n")
	w("Keys (`DBSIZE`: nearly all of them tokens, one per login of the run, warm-ups included) and the memory redis-server's allocator counts for them (`INFO memory` `used_memory`, less than RSS, which adds fragmentation and freed pages). Tokens live 8 hours, so this grows with every login, whatever the store; bytes per key is what it costs per login.\n\n")
	w("| side | keys | used memory | bytes per key |\n|---|--:|--:|--:|\n")
	for _, side := range []struct {
		name string
		k    keyspace
	}{{"reference (benchref-redis)", r.KeysRef}, {"floor (benchauth-redis)", r.KeysFloor}, {"stack (redis-server)", r.KeysStack}} {
		if side.k.Keys == 0 {
			continue
		}
		w("| %s | %d | %.1f MiB | %d |\n", side.name, side.k.Keys, float64(side.k.UsedMemory)/(1<<20), side.k.UsedMemory/side.k.Keys)
	}
	w("\n")
}

// cpuColumns lists the processes seen in runs, in the order first seen.
func cpuColumns(runs []measurement) []string {
	var names []string
	for _, m := range runs {
		for _, c := range m.CPU {
			if !slices.Contains(names, c.Name) {
				names = append(names, c.Name)
			}
		}
	}
	return names
}

func (r *report) writeMemory(w writer) {
	if len(r.MemoryLogin) == 0 {
		return
	}
	w("## Memory\n\n| process | peak RSS during the login rounds (VmHWM) | RSS after them (VmRSS) | peak RSS from then to the end | RSS at the end |\n|---|--:|--:|--:|--:|\n")
	end := map[string]memory{}
	for _, p := range r.MemoryEnd {
		end[p.Name] = p.memory
	}
	for _, p := range r.MemoryLogin {
		e := end[p.Name]
		w("| %s | %s | %s | %s | %s |\n", p.Name, mib(p.Peak), mib(p.Current), mib(e.Peak), mib(e.Current))
	}
	w("\nThe peaks were reset (`/proc/<pid>/clear_refs`) after the warm-up, just before the first measured login round.\n\n")
}

// echoLine keeps the first line of s, at most 300 characters, for a report
// line.
func echoLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return clip.Runes(line, 300)
}

func mark(ok bool) string {
	if ok {
		return "✓"
	}
	return "✗"
}

// msf is a latency in milliseconds.
func msf(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// ms formats a latency in milliseconds.
func ms(d time.Duration) string { return fmt.Sprintf("%.2f ms", float64(d)/float64(time.Millisecond)) }

// signedMS formats a difference in milliseconds with its sign.
func signedMS(d time.Duration) string {
	return fmt.Sprintf("%+.2f ms", float64(d)/float64(time.Millisecond))
}

// writeReplicas reports the logins' spread over two auth replicas and the
// time a third one took to get its share.
func (r *report) writeReplicas(w writer) {
	if len(r.ReplicaLogins) == 0 {
		return
	}
	total := 0
	for _, l := range r.ReplicaLogins {
		total += l.Logins
	}
	w("## Several replicas\n\n")
	w("Logins through one gateway to two auth replicas behind one name (round_robin over what the name resolves to), one %s round at %d connections:\n\n", r.Config.Round, r.Config.Conns)
	w("| auth replica | logins | share | CPU per login |\n|---|--:|--:|--:|\n")
	for _, l := range r.ReplicaLogins {
		share := 0.0
		if total > 0 {
			share = 100 * float64(l.Logins) / float64(total)
		}
		w("| %s | %d | %.1f%% | %.0f µs |\n", l.Name, l.Logins, share, perCall(l.CPU, l.Logins))
	}
	w("\n%d of those logins failed (wrk's errors).\n", r.ReplicaLoginErrors)
	if n := r.NewReplica; n != nil {
		settled := fmt.Sprintf("after %.1f s", n.Share.Seconds())
		if !n.Settled {
			settled = fmt.Sprintf("not within %s", n.Share)
		}
		first := fmt.Sprintf("after %.1f s", n.FirstCall.Seconds())
		if n.FirstCall == 0 {
			first = "none"
		}
		w("\nA third auth replica added under that load, with production's connection settings (`GRPC_MAX_CONNECTION_AGE=30s`, `GRPC_DNS_MIN_RESOLUTION_INTERVAL=30s`), counted from its name's publication in DNS: first login %s; half an even share of the logins (a sixth) in a half second %s.\n",
			first, settled)
	}
	w("\n")
}

// writeLTIFlood reports the LTI 1.3 login flood: how it was answered, what
// it left in Redis, and the SDK logins beside it.
func (r *report) writeLTIFlood(w writer) {
	f := r.LTIFlood
	if f == nil {
		return
	}
	w("## LTI 1.3 login flood\n\n")
	w("%d `GET /lti/v1p3/login` initiations (one registered platform, a new login_hint each) from %d client addresses in turn (`X-Forwarded-For`, which the gateway trusts from 127.0.0.1), %d callers, against a stack of its own whose redis-server refuses writes past %s (`noeviction`; used memory after seeding + %s), beside %d SDK logins a second:\n\n",
		f.Logins, f.Addresses, floodCallers, mib(f.MaxMemory), mib(floodHeadroom), floodSDKRate)
	w("| figure | value |\n|---|--:|\n")
	other, others := 0, []string{}
	for _, status := range slices.Sorted(maps.Keys(f.Answers)) {
		switch status {
		case 302, 429, 503:
			continue
		}
		other += f.Answers[status]
		others = append(others, fmt.Sprintf("%s: %d", statusName(status), f.Answers[status]))
	}
	for _, status := range []int{302, 429, 503} {
		w("| answers %d | %d |\n", status, f.Answers[status])
	}
	w("| answers, other | %d%s |\n", other, parenthesized(strings.Join(others, ", ")))
	if f.Took > 0 {
		w("| flood: duration, rate | %s, %.0f/s |\n", f.Took.Round(time.Millisecond), float64(f.Logins)/f.Took.Seconds())
	}
	w("| Redis used_memory before / after / peak | %s / %s / %s |\n", mib(f.MemoryBefore), mib(f.MemoryAfter), mib(f.MemoryPeak))
	w("| lti13:login:* keys left | %d |\n", f.KeysLeft)
	w("| bytes per pending login (used_memory growth / keys left; the growth holds the SDK logins' tokens too) | %.0f (MEMORY USAGE of one: %d) |\n", f.BytesPerLogin(), f.OneKeyUsage)
	w("| Redis OOM errors (INFO errorstats) | %d |\n", f.OOMErrors)
	w("\n| SDK logins, %d/s | logins | failed | failures by status | p50 | p99 |\n|---|--:|--:|---|--:|--:|\n", floodSDKRate)
	for _, s := range []struct {
		name string
		pacedRun
	}{{"before the flood", f.SDKBefore}, {"during the flood", f.SDKDuring}} {
		if s.Result == nil {
			continue
		}
		var failures []string
		for _, status := range slices.Sorted(maps.Keys(s.Failures)) {
			failures = append(failures, fmt.Sprintf("%s: %d", statusName(status), s.Failures[status]))
		}
		w("| %s | %d | %d | %s | %s | %s |\n", s.name, s.Requests, s.Errors, strings.Join(failures, ", "),
			ms(s.Percentile(50)), ms(s.Percentile(99)))
	}
	w("\n")
}

// statusName names an HTTP status, 0 being no answer.
func statusName(status int) string {
	if status == 0 {
		return "no answer"
	}
	return strconv.Itoa(status)
}

// parenthesized is " (s)", or nothing when s is empty.
func parenthesized(s string) string {
	if s == "" {
		return ""
	}
	return " (" + s + ")"
}

// writeWebhooks reports webhook delivery: the changes without and with
// webhooks side by side, how the events came, what a delivery costs, and
// how two replicas shared the deliveries.
func (r *report) writeWebhooks(w writer) {
	b := r.Webhooks
	if b == nil {
		return
	}
	w("## Webhook delivery\n\n")
	w("A stack of its own whose webhooks may call a receiver in the bench process on loopback (`WEBHOOK_ALLOW_INSECURE_HOSTS`; plain net/http answering 204 at once): %d workspaces with one webhook each, taking `%s`, and %d without. The changes are `PUT /api/workspace/{id}` with a new name, %d a second, each on its own goroutine (a slow answer does not hold back the next), to one side's workspaces in turn, with a request id of their own, which the event and so its message carry; rounds of %s alternate (A B A B…: without webhooks, with them) after a warm-up of each. After a round with webhooks the bench waits (at most %s) for the event of every change acknowledged; that round's CPU covers the wait.\n\n",
		b.Workspaces, hookEventType, b.Workspaces, b.Rate, r.Config.Round, hookDrainWait)
	if len(b.Hooked) > 0 {
		r.writeHookChanges(w, b)
		writeHookDeliveries(w, b)
		w("CPU per delivered event, beyond what the same changes cost without webhooks (the rounds with webhooks' CPU, less their changes at the reference's CPU per change, over the deliveries): workspace service **%.0f µs**, ferretdb %.0f µs, every server %.0f µs.\n\n",
			b.CPUPerDelivery("workspace"), b.CPUPerDelivery("ferretdb"), b.CPUPerDelivery(""))
		w("The delay runs from the change's answer to its event's first message, and holds `EVENTS_SETTLE` (%s here) by design: a delivery reads only events older than it, so that none can still land behind its cursor, and a publish wakes the cursors for when its events have settled (%s later, the tenth for the replicas' clocks). Both sides make the publish's wake of `webhook_cursors` (the service wakes on every publish, whether a webhook follows the workspace or not), so the difference between them is the deliveries' work, and the wake's own cost is in neither difference; docs/webhooks.md counts it, one `update` per publish. Every %dth message was checked by the Standard Webhooks library against its workspace's secret (%d verified).\n\n",
			hookEventsSettle, hookEventsSettle+hookEventsSettle/10, hookSampleEvery, poolDeliveries(b.Hooked).Verified)
	}
	if b.Replicas != nil {
		writeHookReplicas(w, r.Config, b.Replicas)
	}
	w("These are the stand-in's figures (FerretDB on SQLite, one write at a time, every query but a lone `_id` equality a scan), not a MongoDB server's.\n\n")
}

// writeHookChanges shows the changes of both sides: throughput, answers,
// and each server's CPU per change.
func (r *report) writeHookChanges(w writer, b *webhookBench) {
	type row struct {
		name     string
		m        measurement
		failures map[int]int
	}
	side := func(name string, rounds []changeRound) row {
		failures := map[int]int{}
		for _, c := range rounds {
			for k, v := range c.Failures {
				failures[k] += v
			}
		}
		return row{fmt.Sprintf("%s, %d rounds", name, len(rounds)), pool(measurements(rounds)), failures}
	}
	rows := []row{side("without webhooks", b.Reference), side("with webhooks", b.Hooked)}
	for i := range b.Hooked {
		if i < len(b.Reference) {
			rows = append(rows, row{fmt.Sprintf("  round %d: without", i+1), b.Reference[i].measurement, b.Reference[i].Failures})
		}
		rows = append(rows, row{fmt.Sprintf("  round %d: with", i+1), b.Hooked[i].measurement, b.Hooked[i].Failures})
	}
	names := cpuColumns(measurements(append(slices.Clone(b.Reference), b.Hooked...)))
	w("| changes | sent | acknowledged/s | p50 | p99 | failed | **servers, µs per change** | %s | load avg |\n|---|--:|--:|--:|--:|---|--:|%s--:|\n",
		strings.Join(names, " | "), strings.Repeat("--:|", len(names)))
	for _, x := range rows {
		cells := make([]string, len(names))
		for i, n := range names {
			cells[i] = fmt.Sprintf("%.0f", processCPUPerCall(x.m, n))
		}
		acked := 0.0
		if x.m.Elapsed > 0 {
			acked = float64(x.m.Requests-x.m.Errors) / x.m.Elapsed.Seconds()
		}
		w("| %s | %d | %.1f | %s | %s | %s | **%.0f** | %s | %.2f |\n", x.name, x.m.Requests, acked, ms(x.m.Percentile(50)),
			ms(x.m.Percentile(99)), failureCell(x.m.Errors, x.failures), serverCPU(x.m), strings.Join(cells, " | "), x.m.Load)
	}
	w("\n**servers** adds up every process but bench (the load and the receiver). The CPU clock ticks at 10 ms.\n\n")
}

// writeHookDeliveries shows how each round's events came.
func writeHookDeliveries(w writer, b *webhookBench) {
	w("| events of | recorded | delivered | deliveries/s | delay p50 | p99 | max | messages | again | other | last after the round |\n|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|\n")
	row := func(name string, d *delivery) {
		w("| %s | %d | %d | %.1f | %s | %s | %s | %d | %d | %d | %s |\n", name, d.Recorded, d.Delivered, d.Rate(),
			ms(d.Delay(50)), ms(d.Delay(99)), ms(d.Delay(100)), d.Messages, d.Duplicates, d.Other, d.Drain.Round(time.Millisecond))
	}
	for i, r := range b.Hooked {
		row(fmt.Sprintf("round %d", i+1), r.Delivery)
	}
	if len(b.Hooked) > 1 {
		row(fmt.Sprintf("%d rounds", len(b.Hooked)), poolDeliveries(b.Hooked))
	}
	w("\nRecorded: the changes acknowledged (each has its event); delivered: their events that came; deliveries/s: from a round's first delivery to its last; again: messages whose webhook-id came before (0 in a normal run); other: messages of events no acknowledged change of the round made (a change answered 503 but stored, which the relay publishes).\n\n")
}

// writeHookReplicas shows the round on two workspace-service replicas.
func writeHookReplicas(w writer, c config, r *changeRound) {
	d := r.Delivery
	w("### Two workspace-service replicas\n\nOne %s round of the same changes on a stack of its own with two workspace-service replicas behind one name, as many workspaces with a webhook each; the receiver tells which replica sent a message by the owner of the socket it came from (`/proc/net/tcp`, and the replicas' descriptors).\n\n", c.Round)
	w("| replica | deliveries | share | CPU over the round and the wait |\n|---|--:|--:|--:|\n")
	named := 0
	for _, p := range r.CPU {
		n := d.BySender[p.Name]
		named += n
		share := 0.0
		if d.Delivered > 0 {
			share = 100 * float64(n) / float64(d.Delivered)
		}
		w("| %s | %d | %.1f%% | %s |\n", p.Name, n, share, p.Used.Round(10*time.Millisecond))
	}
	w("\n%d changes acknowledged, %d of their events delivered (%d by a replica not told apart), %d messages came again, %d other; delay p50 %s, p99 %s; %d sampled signatures verified.\n\n",
		d.Recorded, d.Delivered, d.Delivered-named, d.Duplicates, d.Other, ms(d.Delay(50)), ms(d.Delay(99)), d.Verified)
}

// failureCell is a count of failures with their statuses.
func failureCell(n int, byStatus map[int]int) string {
	var parts []string
	for _, status := range slices.Sorted(maps.Keys(byStatus)) {
		parts = append(parts, fmt.Sprintf("%s: %d", statusName(status), byStatus[status]))
	}
	return strconv.Itoa(n) + parenthesized(strings.Join(parts, ", "))
}
