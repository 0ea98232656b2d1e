package main

import (
	"context"
	"fmt"
	"math"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/liveproctor/workspaces/deploy/local/loadgen"
)

// The p50s the README holds the embedded store to, through the gateway
// with one caller: the store-scale scenario finds the largest number of
// workspaces at which each is still met.
const (
	thresholdList   = time.Second
	thresholdUpdate = 250 * time.Millisecond
	thresholdCreate = 100 * time.Millisecond
)

// defaultStoreSteps about double from 50: on the embedded store every query
// but a lone _id equality reads the whole collection, so the operations
// slow down in proportion to it, and doubling places each threshold within
// a factor of two or so in few steps. A create passes its 100 ms at about
// 100 workspaces, the list its 1 s at a few thousand; 1,000 is the list
// scenario's size.
var defaultStoreSteps = steps{50, 100, 250, 500, 1_000, 2_000, 4_000, 8_000}

// steps is the value of -store-steps: ascending numbers of workspaces.
type steps []int

func (s *steps) String() string {
	out := make([]string, len(*s))
	for i, n := range *s {
		out[i] = strconv.Itoa(n)
	}
	return strings.Join(out, ",")
}

func (s *steps) Set(v string) error {
	var out steps
	for _, f := range strings.Split(v, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 1 {
			return fmt.Errorf("bad step %q: want a number of workspaces", f)
		}
		if len(out) > 0 && n <= out[len(out)-1] {
			return fmt.Errorf("steps must ascend: %d after %d", n, out[len(out)-1])
		}
		out = append(out, n)
	}
	*s = out
	return nil
}

// storeStep is the store-scale scenario at one number of workspaces.
type storeStep struct {
	// Workspaces is how many bench workspaces the store held as the step
	// began; its creates add up to StoreCalls + 1 more by its end.
	Workspaces int
	growth
	At   time.Time // when the measurements began (UTC)
	Load float64   // the load average (1 min) then
	// Returned and StateReturned are the first pages' sizes.
	Returned, StateReturned         int
	List, StateList, Update, Create measurement
}

// storeOp is one of the operations the scenario measures at each step.
type storeOp struct {
	Name      string
	Threshold time.Duration
	Of        func(*storeStep) measurement
}

// storeOps are the measured operations, in the table's order.
var storeOps = []storeOp{
	{"filtered list (search, page of 100)", thresholdList, func(s *storeStep) measurement { return s.List }},
	{"list with a state filter (page of 100)", thresholdList, func(s *storeStep) measurement { return s.StateList }},
	{"update (PUT, a new name)", thresholdUpdate, func(s *storeStep) measurement { return s.Update }},
	{"create (POST, a new id)", thresholdCreate, func(s *storeStep) measurement { return s.Create }},
}

// within reports whether op's p50 at step s is within its threshold, with
// most calls answered: a 503 is no answer, however fast.
func (op storeOp) within(s *storeStep) bool {
	m := op.Of(s)
	return m.Result != nil && m.Requests > 0 && m.Percentile(50) <= op.Threshold && 2*m.Errors < m.Requests
}

// measureStoreScale grows the store step by step (REST creates up to
// -seed-rest, copies beyond, as the list scenario does) and, at each step,
// measures through the gateway with one caller a filtered list, a list
// with a state filter, an update and a create: the embedded store runs one
// query at a time, so more callers would only queue. It stops growing once
// every operation's p50 is past its threshold. A step below what the store
// holds already (the step before it and its creates, when steps are close)
// is skipped.
func measureStoreScale(ctx context.Context, cfg config, e *env, rep *report) error {
	var updates atomic.Int64 // numbers the updates' names across steps
	for _, size := range cfg.StoreSteps {
		if e.seeded > size {
			progress("  skipping %d workspaces: the store holds %d already", size, e.seeded)
			rep.StoreSkipped = append(rep.StoreSkipped, size)
			continue
		}
		grown, err := e.grow(ctx, cfg, size)
		if err != nil {
			return err
		}
		step := storeStep{Workspaces: e.seeded, growth: grown, At: time.Now().UTC(), Load: loadAverage()}
		if err := e.measureStoreStep(ctx, cfg, &step, &updates); err != nil {
			return err
		}
		rep.Store = append(rep.Store, step)
		if !slices.ContainsFunc(storeOps, func(op storeOp) bool { return op.within(&step) }) {
			progress("  every operation is past its threshold at %d workspaces: the store grows no further", step.Workspaces)
			break
		}
	}
	return nil
}

// measureStoreStep measures the four operations at the store's current
// size, into s.
func (e *env) measureStoreStep(ctx context.Context, cfg config, s *storeStep, updates *atomic.Int64) error {
	var err error
	at := fmt.Sprintf("%d workspaces", s.Workspaces)
	if s.Returned, err = e.firstPage(ctx, listBody); err != nil {
		return fmt.Errorf("list at %s: %w", at, err)
	}
	if s.List, err = measureCalls(ctx, cfg, "list with a filter, "+at, cfg.StoreCalls, e.listOp(listBody)); err != nil {
		return err
	}
	if s.StateReturned, err = e.firstPage(ctx, stateListBody); err != nil {
		return fmt.Errorf("state list at %s: %w", at, err)
	}
	if s.StateList, err = measureCalls(ctx, cfg, "list with a state filter, "+at, cfg.StoreCalls, e.listOp(stateListBody)); err != nil {
		return err
	}
	if s.Update, err = measureCalls(ctx, cfg, "update, "+at, cfg.StoreCalls, e.updateOp(updates)); err != nil {
		return err
	}
	// Creates of the next ids, which the next step's growth then follows.
	var next atomic.Int64
	next.Store(int64(e.seeded))
	s.Create, err = measureCalls(ctx, cfg, "create, "+at, cfg.StoreCalls, func(ctx context.Context) error {
		return e.create(ctx, next.Add(1))
	})
	e.seeded = int(next.Load())
	return err
}

// updateOp renames a workspace per call, to a name no earlier call gave
// (an update that changes nothing could be answered without a write). The
// workspaces are spread evenly over the store (the golden ratio's
// multiples, modulo 1, over bench-000001 to the last), copies included,
// which are the same documents as created ones: the stand-in's updateOne
// reads the documents in the order they were written and stops at the
// first match, so updating only the workspaces created first would read
// almost nothing (storeprobe, 2,000 documents: 4 ms for the first, 0.46 s
// for the middle one, 0.9 s for the last). The body holds the name alone,
// since an update keeps the fields its body leaves out; without If-Match
// the service reads the workspace and writes it at the revision it read.
// Names keep the list's order and its search.
func (e *env) updateOp(count *atomic.Int64) loadgen.Op {
	seeded := max(e.seeded, 1)
	req := loadgen.HTTPRequest{Client: e.http, Method: http.MethodPut, Header: e.basic}
	return func(ctx context.Context) error {
		k := count.Add(1)
		n := 1 + int(math.Mod(float64(k)*goldenRatio, 1)*float64(seeded))
		r := req
		r.URL = fmt.Sprintf("%s/api/workspace/bench-%06d", e.stack.GatewayURL, n)
		return r.Send(ctx, fmt.Appendf(nil, `{"name":"bench workspace %06d, update %d"}`, n, k))
	}
}

// goldenRatio's multiples, modulo 1, spread evenly over [0, 1) however
// many are taken.
const goldenRatio = 0.6180339887498949
