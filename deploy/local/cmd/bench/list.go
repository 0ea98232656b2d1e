package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"net/http"
	"sync/atomic"
	"time"

	"github.com/liveproctor/workspaces/deploy/local/loadgen"
)

// listBody is the measured list request: a search that every seeded
// workspace matches, one page of 100.
const listBody = `{"filter":{"search":"bench"},"pageSize":100}`

// stateListBody is the list with a state filter, which one seeded workspace
// in stateEvery matches (see seedBody): a page of 100 then reaches deep
// into the list order.
const stateListBody = `{"filter":{"address.state":{"include":["US-CA"]}},"pageSize":100}`

// stateEvery: every stateEvery-th seeded workspace is in US-CA, the others
// in US-IL.
const stateEvery = 10

// listSizes are the numbers of workspaces the list is measured at: with
// -large, up to the 50,000 workspaces of a large vendor.
func listSizes(cfg config) []int {
	if cfg.Large {
		return []int{1_000, 10_000, 25_000, 50_000}
	}
	return []int{1_000}
}

// listCallers is the concurrency of the list measurement. One caller gives
// the cost of one query; on the embedded store a query over 1,000
// workspaces takes a good part of a second, so 64 callers would only queue
// until the services' 5 s call timeout answers 503.
const listCallers = 1

// restSeedLimit is how many workspaces are created through the REST route
// (-seed-rest); beyond it they are copied straight into the store (see
// seedDirect). On the embedded store a create reads the whole collection,
// about 1 ms per workspace it holds, so creating n takes time in n²
// (creates 425 to 800 took 3 min 15 s with 2 workers; the first 200 take
// some 20 s), and copies are the same documents. -seed-rest 50000 -large
// creates every one through REST, which measures creates as the store
// grows.
var restSeedLimit = 200

func init() {
	flag.IntVar(&restSeedLimit, "seed-rest", restSeedLimit,
		"how many of the bench's workspaces are created through the REST route; the rest are copied into the store")
}

// measureLists grows the store to each size in turn, and measures the
// filtered list after each. A size below what the store holds already (the
// store-scale scenario's workspaces, in a full run, whose table has the
// list at each of its steps) is skipped.
func measureLists(ctx context.Context, cfg config, e *env, rep *report) error {
	for _, size := range listSizes(cfg) {
		if e.seeded > size {
			progress("  skipping %d workspaces: the store holds %d already", size, e.seeded)
			rep.ListSkipped = append(rep.ListSkipped, size)
			continue
		}
		grown, err := e.grow(ctx, cfg, size)
		if err != nil {
			return err
		}
		run := listRun{Workspaces: size, growth: grown}
		if run.Returned, err = e.firstPage(ctx, listBody); err != nil {
			return fmt.Errorf("list at %d workspaces: %w", size, err)
		}
		op := e.listOp(listBody)
		if err := warmUp(ctx, cfg, "list", listCallers, op); err != nil {
			return err
		}
		if run.List, err = measure(ctx, cfg, fmt.Sprintf("list with a filter, %d workspaces", size), listCallers, op); err != nil {
			return err
		}
		rep.Lists = append(rep.Lists, run)
		if err := measureStateList(ctx, cfg, e, size); err != nil {
			return err
		}
	}
	if cfg.Large {
		// Creates through REST once the store holds the most workspaces,
		// whether those were created or copied.
		if _, _, err := e.seed(ctx, cfg, e.seeded+createsAtSize); err != nil {
			return err
		}
	}
	return nil
}

// createsAtSize is how many workspaces -large creates through REST after
// the largest list, for the creates' latency at that size.
const createsAtSize = 2_000

// measureStateList measures the list with a state filter at size
// workspaces. Its figures are printed, not part of the results file.
func measureStateList(ctx context.Context, cfg config, e *env, size int) error {
	returned, err := e.firstPage(ctx, stateListBody)
	if err != nil {
		return fmt.Errorf("state list at %d workspaces: %w", size, err)
	}
	_, err = measure(ctx, cfg, fmt.Sprintf("list with a state filter (%d returned), %d workspaces", returned, size), listCallers, e.listOp(stateListBody))
	return err
}

// listOp is the list request with body, as the load generator sends it.
func (e *env) listOp(body string) loadgen.Op {
	return loadgen.HTTPRequest{Client: e.http, Method: http.MethodPost, URL: e.stack.GatewayURL + "/api/workspaces",
		Header: e.basic, Body: []byte(body)}.Op()
}

// firstPage lists with body once and returns how many workspaces the page
// held: a check that the measured request finds what it should.
func (e *env) firstPage(ctx context.Context, body string) (int, error) {
	var page struct {
		Workspaces []struct{} `json:"workspaces"`
	}
	err := e.postJSON(ctx, "/api/workspaces", body, &page)
	return len(page.Workspaces), err
}

// growth is how the store was grown to a size: REST creates up to
// restSeedLimit, copies beyond.
type growth struct {
	Seed measurement // the REST creates; Result nil when there were none
	// SeedRetries counts creates retried after a 503.
	SeedRetries int
	// Copied workspaces were written straight into the store, in CopyTook.
	Copied   int
	CopyTook time.Duration
}

// grow brings the store's bench workspaces up to size: through the REST
// create route while there are fewer than restSeedLimit, then as copies
// (seedDirect). It does nothing when the store holds size already.
func (e *env) grow(ctx context.Context, cfg config, size int) (growth, error) {
	var g growth
	var err error
	if rest := min(size, restSeedLimit); e.seeded < rest {
		if g.Seed, g.SeedRetries, err = e.seed(ctx, cfg, rest); err != nil {
			return g, err
		}
	}
	if e.seeded < size {
		g.Copied = size - e.seeded
		if g.CopyTook, err = e.seedDirect(ctx, size); err != nil {
			return g, err
		}
		progress("  copied %d workspaces in %s", g.Copied, g.CopyTook.Round(time.Millisecond))
	}
	return g, nil
}

// seedBody is the create request of bench-<n>.
func seedBody(n int64) []byte {
	state := "US-IL"
	if n%stateEvery == 0 {
		state = "US-CA"
	}
	return fmt.Appendf(nil, `{"id":"bench-%06d","name":"bench workspace %06d","type":"DISTRICT",`+
		`"parentWorkspaceId":null,"address":{"city":"Springfield","state":%q,"country":"US"},"products":[]}`, n, n, state)
}

// defaultSeedWorkers is -seed-workers' default. The embedded store reads
// the whole collection for every create (and again for its publish), and
// a create's publish is bounded by 1 s (half of EVENTS_SETTLE): 32 creators
// queued on it waited longer than that, and creates answered 503 even at
// 200 workspaces. Two keep both cores busy without the queue.
const defaultSeedWorkers = 2

// seedAttempts bounds the tries of one create. The embedded store
// serialises writes, so under several writers a create now and then runs
// into its publish's bound or the services' call timeout and answers 503
// ("retry shortly"); the seeder then does what a client should: it retries
// the identical request, which the service answers as the first (creates
// are idempotent).
const seedAttempts = 5

// seed creates the workspaces after the store's e.seeded, up to bench-<to>,
// under the root through POST /api/workspace with cfg.SeedWorkers
// concurrent creators. A create's latency includes its retries; their
// number is returned.
func (e *env) seed(ctx context.Context, cfg config, to int) (measurement, int, error) {
	from := e.seeded
	progress("  seeding workspaces %d to %d with %d workers", from+1, to, cfg.SeedWorkers)
	var next, retries atomic.Int64
	next.Store(int64(from))
	op := func(ctx context.Context) error {
		n := next.Add(1)
		return retryUnavailable(ctx, &retries, func(ctx context.Context) error { return e.create(ctx, n) })
	}
	m, err := measureFor(ctx, loadgen.Options{Workers: cfg.SeedWorkers, Calls: to - from},
		fmt.Sprintf("seed (REST create), to %d workspaces", to), op)
	if err != nil {
		return m, 0, err
	}
	if m.Errors > 0 {
		return m, 0, fmt.Errorf("seeding: %d of %d creates failed, the first with: %w", m.Errors, m.Requests, m.FirstError)
	}
	e.seeded = to
	return m, int(retries.Load()), nil
}

// retryUnavailable makes an idempotent call until it succeeds, fails
// otherwise than with a 503, or has been tried seedAttempts times, 250 ms
// apart, and adds the tries after the first to retries.
func retryUnavailable(ctx context.Context, retries *atomic.Int64, call func(context.Context) error) error {
	for attempt := 1; ; attempt++ {
		err := call(ctx)
		var status *loadgen.StatusError
		if attempt == seedAttempts || !errors.As(err, &status) || status.Status != http.StatusServiceUnavailable {
			return err
		}
		retries.Add(1)
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(250 * time.Millisecond):
		}
	}
}

// create sends the create request of bench-<n> (seedBody) to the gateway.
func (e *env) create(ctx context.Context, n int64) error {
	return loadgen.HTTPRequest{Client: e.http, Method: http.MethodPost, URL: e.stack.GatewayURL + "/api/workspace",
		Header: e.basic}.Send(ctx, seedBody(n))
}
