package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/liveproctor/workspaces/deploy/local/loadgen"
	"github.com/liveproctor/workspaces/deploy/local/stack"
)

const (
	// hookEventsSettle is the webhook stacks' EVENTS_SETTLE (the default,
	// set so that the report can say it): a delivery reads only events older
	// than it, so every delay holds it.
	hookEventsSettle = 2 * time.Second
	// hookDrainWait bounds the wait, after a round, for the events of its
	// changes: past the idle re-check (WEBHOOK_IDLE_RECHECK, 1 min), which
	// finds even an event whose wake was lost.
	hookDrainWait = 2 * time.Minute
	// hookEventType is the one type the bench's webhooks take: the changes'
	// (a new name), not the webhooks' own creation.
	hookEventType = "workspace.updated"
)

// webhookBench is what the webhooks scenario saw.
type webhookBench struct {
	Workspaces, Rate int
	// Reference and Hooked are the alternating rounds of the same changes:
	// to workspaces without webhooks, and to as many with one each.
	Reference, Hooked []changeRound
	// Replicas is one round on a stack with two workspace-service
	// replicas.
	Replicas *changeRound
}

// changeRound is one round of changes at the steady rate.
type changeRound struct {
	// measurement holds the changes' answers and the CPU each process used
	// over the round and, with webhooks, until its last delivery.
	measurement
	Failures map[int]int // failed changes by HTTP status; 0: no answer
	Delivery *delivery   // with webhooks: how the events came
}

// delivery is how the events of a round's changes reached the receiver.
type delivery struct {
	Recorded  int // changes acknowledged: each recorded an event
	Delivered int // of those events, the ones that came
	Messages  int // every message, sent again ones included
	// Duplicates are messages with a webhook-id that came before; Other
	// the messages of events of no acknowledged change of the round.
	Duplicates, Other int
	// Delays, sorted, are from a change's answer to its event's first
	// message.
	Delays []time.Duration
	Span   time.Duration // from the round's first delivery to its last
	Drain  time.Duration // from the round's end to its last delivery
	// Verified counts the sampled messages whose signatures verified.
	Verified int
	// BySender counts the deliveries by the process that made them, when
	// the receiver looked (the replicas' round).
	BySender map[string]int
}

// newDelivery matches what came (got) with the changes acknowledged in a
// round that ended at end, by request id, with when each was answered.
func newDelivery(acked map[string]time.Time, got received, end time.Time) *delivery {
	d := &delivery{Recorded: len(acked), Messages: got.Messages, Duplicates: got.Duplicates(), BySender: map[string]int{}}
	var first, last time.Time
	for id, answered := range acked {
		h, ok := got.ByRequest[id]
		if !ok {
			continue
		}
		d.Delivered++
		d.Delays = append(d.Delays, h.At.Sub(answered))
		if h.Sender != "" {
			d.BySender[h.Sender]++
		}
		if first.IsZero() || h.At.Before(first) {
			first = h.At
		}
		if h.At.After(last) {
			last = h.At
		}
	}
	d.Other = got.Distinct - d.Delivered
	slices.Sort(d.Delays)
	if d.Delivered > 0 {
		d.Span, d.Drain = last.Sub(first), max(last.Sub(end), 0)
	}
	return d
}

// Delay is the nearest-rank percentile p of the delays.
func (d *delivery) Delay(p float64) time.Duration {
	return (&loadgen.Result{Latencies: d.Delays}).Percentile(p)
}

// Rate is the deliveries a second from the first to the last.
func (d *delivery) Rate() float64 {
	if d.Span <= 0 {
		return 0
	}
	return float64(d.Delivered) / d.Span.Seconds()
}

// poolDeliveries adds up rounds' deliveries; their delays are pooled and
// their spans added.
func poolDeliveries(rounds []changeRound) *delivery {
	p := &delivery{BySender: map[string]int{}}
	for _, r := range rounds {
		d := r.Delivery
		p.Recorded += d.Recorded
		p.Delivered += d.Delivered
		p.Messages += d.Messages
		p.Duplicates += d.Duplicates
		p.Other += d.Other
		p.Delays = append(p.Delays, d.Delays...)
		p.Span += d.Span
		p.Drain = max(p.Drain, d.Drain)
		p.Verified += d.Verified
		for k, v := range d.BySender {
			p.BySender[k] += v
		}
	}
	slices.Sort(p.Delays)
	return p
}

// measurements are the rounds' measurements.
func measurements(rounds []changeRound) []measurement {
	out := make([]measurement, len(rounds))
	for i, r := range rounds {
		out[i] = r.measurement
	}
	return out
}

// cpuPerCall is process name's CPU per call of m, or every server's when
// name is empty, in microseconds.
func cpuPerCall(m measurement, name string) float64 {
	if name == "" {
		return serverCPU(m)
	}
	return processCPUPerCall(m, name)
}

// CPUPerDelivery is what process name (every server, when empty) used per
// event delivered in the rounds with webhooks beyond what their changes
// cost it in the reference's rounds, in microseconds: (its CPU with
// webhooks − their changes × its CPU per change without) / deliveries.
func (b *webhookBench) CPUPerDelivery(name string) float64 {
	delivered := poolDeliveries(b.Hooked).Delivered
	if delivered == 0 {
		return 0
	}
	ref, hooked := pool(measurements(b.Reference)), pool(measurements(b.Hooked))
	extra := (cpuPerCall(hooked, name) - cpuPerCall(ref, name)) * float64(hooked.Requests)
	return extra / float64(delivered)
}

// faults are what a normal run must not show: an acknowledged change
// whose event did not come, or a message that came twice.
func (b *webhookBench) faults() error {
	var errs []error
	check := func(name string, d *delivery) {
		if lost := d.Recorded - d.Delivered; lost > 0 {
			errs = append(errs, fmt.Errorf("%s: %d of %d events not delivered within %s", name, lost, d.Recorded, hookDrainWait))
		}
		if d.Duplicates > 0 {
			errs = append(errs, fmt.Errorf("%s: %d messages came again", name, d.Duplicates))
		}
	}
	for i, r := range b.Hooked {
		check(fmt.Sprintf("round %d with webhooks", i+1), r.Delivery)
	}
	if b.Replicas != nil {
		check("two replicas", b.Replicas.Delivery)
	}
	return errors.Join(errs...)
}

// measureWebhooks measures webhook delivery on stacks of their own, whose
// webhooks may call a receiver on loopback (WEBHOOK_ALLOW_INSECURE_HOSTS):
// on one stack, the same changes at a steady rate alternately to
// workspaces without webhooks and to workspaces with one each, the events'
// delays and the CPU delivery costs; then, on a stack with two
// workspace-service replicas, one round, to see them share the deliveries
// and make each once. It fails when an acknowledged change's event does not
// come, a message comes twice, or a sampled signature does not verify.
func measureWebhooks(ctx context.Context, cfg config, e *env, rep *report) error {
	if cfg.HookWorkspaces < 1 || cfg.HookRate < 1 {
		return fmt.Errorf("-webhook-workspaces %d, -webhook-rate %d: want at least 1 each", cfg.HookWorkspaces, cfg.HookRate)
	}
	b := &webhookBench{Workspaces: cfg.HookWorkspaces, Rate: cfg.HookRate}
	rep.Webhooks = b
	var changes atomic.Int64 // numbers the changes, and so their request ids, across stacks
	if err := measureDeliveryCost(ctx, cfg, e, b, &changes); err != nil {
		return err
	}
	if err := measureReplicaDelivery(ctx, cfg, e, b, &changes); err != nil {
		return err
	}
	return b.faults()
}

// measureDeliveryCost runs the alternating rounds, after an unmeasured
// warm-up of both sides.
func measureDeliveryCost(ctx context.Context, cfg config, e *env, b *webhookBench, changes *atomic.Int64) error {
	h, err := startHookStack(ctx, cfg, e, "webhooks", stack.Replicas{})
	if err != nil {
		return err
	}
	defer h.Close()
	s := h.stack
	hooked, plain, secrets, err := seedHookWorkspaces(ctx, cfg, e, s.GatewayURL, h.receiver.URL, true)
	if err != nil {
		return err
	}
	procs := []namedPID{{"redis-server", s.Redis.PID()}, {"ferretdb", s.FerretDB.PID()}, {"bench", os.Getpid()}}
	for _, name := range services {
		pid, err := s.PID(name)
		if err != nil {
			return err
		}
		procs = append(procs, namedPID{name, pid})
	}
	without := changeSide{name: "without webhooks", gateway: s.GatewayURL, workspaces: plain, changes: changes}
	with := changeSide{name: "with webhooks", gateway: s.GatewayURL, workspaces: hooked, changes: changes, receiver: h.receiver, secrets: secrets}
	if cfg.Warmup > 0 {
		for _, side := range []changeSide{without, with} {
			if _, err := side.round(ctx, e, cfg.HookRate, cfg.Warmup, procs, true); err != nil {
				return err
			}
		}
	}
	for range cfg.Rounds {
		ref, err := without.round(ctx, e, cfg.HookRate, cfg.Round, procs, false)
		if err != nil {
			return err
		}
		b.Reference = append(b.Reference, ref)
		hk, err := with.round(ctx, e, cfg.HookRate, cfg.Round, procs, false)
		if err != nil {
			return err
		}
		b.Hooked = append(b.Hooked, hk)
	}
	return nil
}

// measureReplicaDelivery runs one round with webhooks on a stack with two
// workspace-service replicas, the receiver telling which one sent each
// message.
func measureReplicaDelivery(ctx context.Context, cfg config, e *env, b *webhookBench, changes *atomic.Int64) error {
	h, err := startHookStack(ctx, cfg, e, "webhook-replicas", stack.Replicas{Workspace: 2})
	if err != nil {
		return err
	}
	defer h.Close()
	var procs []namedPID
	for _, r := range h.stack.Replicas("workspace") {
		procs = append(procs, namedPID{r.Name, r.PID()})
	}
	h.receiver.watch(procs)
	hooked, _, secrets, err := seedHookWorkspaces(ctx, cfg, e, h.stack.GatewayURL, h.receiver.URL, false)
	if err != nil {
		return err
	}
	side := changeSide{name: "with webhooks, two replicas", gateway: h.stack.GatewayURL, workspaces: hooked, changes: changes,
		receiver: h.receiver, secrets: secrets}
	r, err := side.round(ctx, e, cfg.HookRate, cfg.Round, procs, false)
	if err != nil {
		return err
	}
	b.Replicas = &r
	return nil
}

// hookStack is a stack whose webhooks may call its receiver.
type hookStack struct {
	stack    *stack.Stack
	receiver *hookReceiver
}

// startHookStack starts a receiver, then a stack named name (its data
// folder) that may deliver to it, with the bench's settings and replicas.
func startHookStack(ctx context.Context, cfg config, e *env, name string, replicas stack.Replicas) (*hookStack, error) {
	rc, err := startHookReceiver()
	if err != nil {
		return nil, err
	}
	progress("starting a stack for the webhooks (%s), their receiver on %s", name, rc.Host)
	var logs bytes.Buffer
	s, err := stack.Start(ctx, stack.Options{
		BinDir: filepath.Join(e.tmp, "bin"), DataDir: filepath.Join(e.tmp, name), Replicas: replicas,
		Env:    append(stackEnv(cfg), "WEBHOOK_ALLOW_INSECURE_HOSTS="+rc.Host, "EVENTS_SETTLE="+hookEventsSettle.String()),
		Output: &logs,
	})
	if err != nil {
		_ = rc.Close()
		return nil, fmt.Errorf("start the %s stack: %w\n%s", name, err, logs.String())
	}
	return &hookStack{stack: s, receiver: rc}, nil
}

// Close stops the stack, then the receiver.
func (h *hookStack) Close() {
	if err := h.stack.Close(); err != nil {
		fmt.Fprintln(os.Stderr, "stop the webhooks' stack:", err)
	}
	_ = h.receiver.Close()
}

// seedHookWorkspaces creates cfg.HookWorkspaces workspaces, hooked-0001
// on, under the root through the gateway, each with one webhook to hookURL
// taking hookEventType, and with plain as many more, plain-0001 on, without
// webhooks, each created after the hooked one of its number: the stand-in
// reads documents in the order they were written, so both sides' changes
// then read alike. It returns the ids of both and the webhooks' secrets by
// workspace. A create answered 503 is retried (creates are idempotent); a
// webhook's create is not, since a second webhook would get every message
// again.
func seedHookWorkspaces(ctx context.Context, cfg config, e *env, gateway, hookURL string, plain bool) (hooked, others []string, secrets map[string]string, err error) {
	type job struct {
		id   string
		hook bool
	}
	var jobs []job
	for i := 1; i <= cfg.HookWorkspaces; i++ {
		jobs = append(jobs, job{fmt.Sprintf("hooked-%04d", i), true})
		hooked = append(hooked, jobs[len(jobs)-1].id)
		if plain {
			jobs = append(jobs, job{fmt.Sprintf("plain-%04d", i), false})
			others = append(others, jobs[len(jobs)-1].id)
		}
	}
	progress("  seeding %d workspaces with a webhook each and %d without", len(hooked), len(others))
	var (
		next, retries atomic.Int64
		mu            sync.Mutex
	)
	secrets = map[string]string{}
	create := loadgen.HTTPRequest{Client: e.http, Method: http.MethodPost, URL: gateway + "/api/workspace", Header: e.basic}
	hook := fmt.Sprintf(`{"url":%q,"eventTypes":[%q]}`, hookURL, hookEventType)
	res, err := loadgen.Run(ctx, loadgen.Options{Workers: cfg.SeedWorkers, Calls: len(jobs)}, func(ctx context.Context) error {
		j := jobs[next.Add(1)-1]
		body := fmt.Appendf(nil, `{"id":%q,"name":"webhook bench %s","type":"DISTRICT"}`, j.id, j.id)
		if err := retryUnavailable(ctx, &retries, func(ctx context.Context) error { return create.Send(ctx, body) }); err != nil {
			return fmt.Errorf("create %s: %w", j.id, err)
		}
		if !j.hook {
			return nil
		}
		var created struct {
			Secret string `json:"secret"`
		}
		if err := postJSONAt(ctx, e.http, gateway, e.basic, "/api/workspace/"+j.id+"/webhooks", hook, &created); err != nil {
			return fmt.Errorf("add the webhook of %s: %w", j.id, err)
		}
		mu.Lock()
		defer mu.Unlock()
		secrets[j.id] = created.Secret
		return nil
	})
	if err != nil {
		return nil, nil, nil, err
	}
	if res.Errors > 0 {
		return nil, nil, nil, fmt.Errorf("seeding the webhooks' workspaces: %d of %d failed, the first with: %w", res.Errors, res.Requests, res.FirstError)
	}
	return hooked, others, secrets, nil
}

// changeSide is one side of the comparison: changes to its workspaces, in
// turn, and with a receiver, the webhooks' messages they cause.
type changeSide struct {
	name       string
	gateway    string
	workspaces []string
	changes    *atomic.Int64
	receiver   *hookReceiver     // nil: no webhooks
	secrets    map[string]string // the webhooks' secrets by workspace
}

// round makes changes at rate a second for d, measuring procs' CPU; with
// webhooks it then waits for the events of the changes acknowledged (at
// most hookDrainWait) and verifies the sampled messages' signatures. A
// warm-up round fails only when not one change succeeded.
func (c changeSide) round(ctx context.Context, e *env, rate int, d time.Duration, procs []namedPID, warmUp bool) (changeRound, error) {
	if c.receiver != nil {
		c.receiver.reset()
	}
	ch := &changer{side: c, client: e.http, basic: e.basic, acked: map[string]time.Time{}}
	load := loadAverage()
	meter, err := startCPU(procs)
	if err != nil {
		return changeRound{}, err
	}
	pace, stop := context.WithTimeout(ctx, d)
	run := pacedCalls(pace, ctx, rate, ch.change)
	stop()
	end := time.Now()
	if err := ctx.Err(); err != nil {
		return changeRound{}, err
	}
	acked := ch.answered()
	if warmUp && len(acked) == 0 {
		return changeRound{}, fmt.Errorf("warm up the changes %s: all %d failed, the first with: %w", c.name, run.Requests, run.FirstError)
	}
	if c.receiver != nil {
		if err := c.receiver.awaitRequests(ctx, slices.Collect(maps.Keys(acked)), hookDrainWait); err != nil {
			return changeRound{}, err
		}
	}
	cpu, err := meter.stop()
	if err != nil {
		return changeRound{}, err
	}
	r := changeRound{measurement: measurement{Scenario: c.name, Result: run.Result, CPU: cpu, Load: load}, Failures: run.Failures}
	line := fmt.Sprintf("  changes %-28s %d/s: %s", c.name, rate, run.Result)
	if c.receiver != nil {
		got := c.receiver.snapshot()
		r.Delivery = newDelivery(acked, got, end)
		if r.Delivery.Verified, err = verifySignatures(got.Sample, c.secrets); err != nil {
			return r, err
		}
		dl := r.Delivery
		line += fmt.Sprintf("; delivered %d of %d, delay p50 %s, p99 %s, %d again", dl.Delivered, dl.Recorded,
			dl.Delay(50).Round(time.Millisecond), dl.Delay(99).Round(time.Millisecond), dl.Duplicates)
	}
	if warmUp {
		line = strings.Replace(line, "changes", "warm-up", 1)
	}
	progress("%s", line)
	return r, nil
}

// changer renames its side's workspaces in turn, each change with a
// request id of its own (which the event, and so its message, carries),
// and keeps when each acknowledged change was answered.
type changer struct {
	side   changeSide
	client *http.Client
	basic  http.Header

	mu    sync.Mutex
	acked map[string]time.Time // by request id
}

func (c *changer) change(ctx context.Context) error {
	n := c.side.changes.Add(1)
	ws := c.side.workspaces[int(n)%len(c.side.workspaces)]
	id := fmt.Sprintf("whb-%d", n)
	header := c.basic.Clone()
	header.Set("X-Request-Id", id)
	req := loadgen.HTTPRequest{Client: c.client, Method: http.MethodPut, URL: c.side.gateway + "/api/workspace/" + ws, Header: header}
	if err := req.Send(ctx, fmt.Appendf(nil, `{"name":"webhook bench %s, change %d"}`, ws, n)); err != nil {
		return err
	}
	answered := time.Now()
	c.mu.Lock()
	defer c.mu.Unlock()
	c.acked[id] = answered
	return nil
}

// answered copies the acknowledged changes' answer times.
func (c *changer) answered() map[string]time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return maps.Clone(c.acked)
}
