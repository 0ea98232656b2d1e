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
// seedDirect). -seed-rest 50000 -large creates every one through REST,
// which measures creates as the store grows.
var restSeedLimit = 1_000

func init() {
	flag.IntVar(&restSeedLimit, "seed-rest", restSeedLimit,
		"how many of the list's workspaces are created through the REST route; the rest are copied into the store")
}

// measureLists seeds workspaces up to each size in turn, and measures the
// filtered list after each.
func measureLists(ctx context.Context, cfg config, e *env, rep *report) error {
	seeded := 0
	for _, size := range listSizes(cfg) {
		var seed measurement
		var retried int
		var err error
		if seeded < min(size, restSeedLimit) {
			seed, retried, err = e.seed(ctx, cfg, seeded, min(size, restSeedLimit))
			if err != nil {
				return err
			}
			seeded = min(size, restSeedLimit)
		}
		var copied int
		var copyTook time.Duration
		if seeded < size {
			if copyTook, err = e.seedDirect(ctx, seeded, size); err != nil {
				return err
			}
			copied = size - seeded
			progress("  copied %d workspaces in %s", copied, copyTook.Round(time.Millisecond))
			seeded = size
		}

		var page struct {
			Workspaces []struct{} `json:"workspaces"`
		}
		if err := e.postJSON(ctx, "/api/workspaces", listBody, &page); err != nil {
			return fmt.Errorf("list at %d workspaces: %w", size, err)
		}
		run := listRun{Workspaces: size, Seed: seed, SeedRetries: retried, Returned: len(page.Workspaces), Copied: copied, CopyTook: copyTook}
		op := loadgen.HTTPRequest{Client: e.http, Method: http.MethodPost, URL: e.stack.GatewayURL + "/api/workspaces",
			Header: e.basic, Body: []byte(listBody)}.Op()
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
		if _, _, err := e.seed(ctx, cfg, seeded, seeded+createsAtSize); err != nil {
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
	var page struct {
		Workspaces []struct{} `json:"workspaces"`
	}
	if err := e.postJSON(ctx, "/api/workspaces", stateListBody, &page); err != nil {
		return fmt.Errorf("state list at %d workspaces: %w", size, err)
	}
	op := loadgen.HTTPRequest{Client: e.http, Method: http.MethodPost, URL: e.stack.GatewayURL + "/api/workspaces",
		Header: e.basic, Body: []byte(stateListBody)}.Op()
	_, err := measure(ctx, cfg, fmt.Sprintf("list with a state filter (%d returned), %d workspaces", len(page.Workspaces), size), listCallers, op)
	return err
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

// seedAttempts bounds the tries of one create. The embedded store
// serialises writes, so under 32 writers a create now and then runs into
// the services' 5 s call timeout and answers 503 ("retry shortly"); the
// seeder then does what a client should: it retries the identical request,
// which the service answers as the first (creates are idempotent).
const seedAttempts = 5

// seed creates workspaces bench-<from+1> … bench-<to> under the root
// through POST /api/workspace with cfg.SeedWorkers concurrent creators. A
// create's latency includes its retries; their number is returned.
func (e *env) seed(ctx context.Context, cfg config, from, to int) (measurement, int, error) {
	progress("  seeding workspaces %d to %d with %d workers", from+1, to, cfg.SeedWorkers)
	create := loadgen.HTTPRequest{Client: e.http, Method: http.MethodPost, URL: e.stack.GatewayURL + "/api/workspace",
		Header: e.basic}
	var next, retries atomic.Int64
	next.Store(int64(from))
	op := func(ctx context.Context) error {
		n := next.Add(1)
		body := seedBody(n)
		for attempt := 1; ; attempt++ {
			err := create.Send(ctx, body)
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
	m, err := measureFor(ctx, loadgen.Options{Workers: cfg.SeedWorkers, Calls: to - from},
		fmt.Sprintf("seed (REST create), to %d workspaces", to), op)
	if err != nil {
		return m, 0, err
	}
	if m.Errors > 0 {
		return m, 0, fmt.Errorf("seeding: %d of %d creates failed, the first with: %w", m.Errors, m.Requests, m.FirstError)
	}
	return m, int(retries.Load()), nil
}
