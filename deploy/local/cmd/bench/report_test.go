package main

import (
	"strings"
	"testing"
	"time"

	"github.com/liveproctor/workspaces/deploy/local/loadgen"
)

// TestReportShowsTheFloorBesideTheTargets checks the floor's informational
// lines: its CPU, throughput and p99 ratios to the reference and to the
// stack, and its row in the CPU table.
func TestReportShowsTheFloorBesideTheTargets(t *testing.T) {
	round := func(name string, requests int, p99 time.Duration, cpu ...processCPU) measurement {
		lat := make([]time.Duration, 100)
		for i := range lat {
			lat[i] = p99
		}
		return measurement{Scenario: name, Callers: 64, CPU: cpu,
			Result: &loadgen.Result{Requests: requests, Elapsed: 10 * time.Second, Latencies: lat}}
	}
	// Per request: reference 40 µs, floor 100 µs, stack 250 µs of server
	// CPU; 20,000, 10,000 and 4,000 req/s; p99 10, 20 and 80 ms.
	r := &report{
		Config: config{Round: 10 * time.Second, Rounds: 1, Conns: 64},
		LoginRef: []measurement{round("login, reference", 200000, 10*time.Millisecond,
			processCPU{"benchref", 6 * time.Second}, processCPU{"benchref-redis", 2 * time.Second}, processCPU{"wrk", time.Second})},
		LoginFloor: []measurement{round("login, floor", 100000, 20*time.Millisecond,
			processCPU{"benchproxy", 6 * time.Second}, processCPU{"benchauth", 3 * time.Second}, processCPU{"benchauth-redis", time.Second})},
		LoginStack: []measurement{round("login, stack", 40000, 80*time.Millisecond,
			processCPU{"gateway", 4 * time.Second}, processCPU{"auth", 4 * time.Second}, processCPU{"redis-server", 2 * time.Second})},
	}
	md := r.Markdown()
	for _, want := range []string{
		"| floor (informational): CPU per request of the servers, reference / floor | 0.400 (40 µs / 100 µs) | — |",
		"| floor (informational): CPU per request of the servers, floor / stack | 0.400 (100 µs / 250 µs) | — |",
		"| floor (informational): wrk throughput, floor / reference | 0.500 (10000 / 20000 req/s), 0 errors on the floor | — |",
		"| floor (informational): wrk throughput, stack / floor | 0.400 (4000 / 10000 req/s) | — |",
		"| floor (informational): p99, floor vs the reference | 20.00 ms vs 10.00 ms (2.00×) | — |",
		"| floor (informational): p99, stack vs the floor | 80.00 ms vs 20.00 ms (4.00×) | — |",
		"| login, floor | 64 | **100** |",
		"| login, floor (benchproxy → benchauth), 1 rounds | 64 | 100000 | 10000 |",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("the report lacks %q:\n%s", want, md)
		}
	}
}

// TestReportShowsBytesPerStoredKey checks the table of what each side's
// redis-server holds after the login rounds.
func TestReportShowsBytesPerStoredKey(t *testing.T) {
	r := &report{
		Config:          config{Round: 10 * time.Second, Rounds: 1, Conns: 64},
		LoginStack:      []measurement{{Scenario: "login, stack", Callers: 64, Result: &loadgen.Result{Requests: 1000, Elapsed: time.Second}}},
		RedisLoginStack: []commandStat{{Command: "evalsha", Calls: 1000, Usec: 20000}},
		KeysRef:         keyspace{Keys: 4000, UsedMemory: 4000 * 330},
		KeysStack:       keyspace{Keys: 2048, UsedMemory: 1 << 20},
	}
	md := r.Markdown()
	for _, want := range []string{
		"| reference (benchref-redis) | 4000 | 1.3 MiB | 330 |",
		"| stack (redis-server) | 2048 | 1.0 MiB | 512 |",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("the report lacks %q:\n%s", want, md)
		}
	}
	if strings.Contains(md, "floor (benchauth-redis)") {
		t.Error("the report shows a floor redis that was not measured")
	}
}

// TestReportShowsTheStoreScale checks the store-scale table and, for each
// operation, the largest step within its threshold: the largest, every
// step or none, a step with most calls failed counting as past it.
func TestReportShowsTheStoreScale(t *testing.T) {
	ms := func(p50 int, errors int) measurement {
		lat := []time.Duration{time.Duration(p50) * time.Millisecond, time.Duration(p50) * time.Millisecond,
			time.Duration(2*p50) * time.Millisecond}
		return measurement{Callers: 1, Result: &loadgen.Result{Requests: len(lat), Errors: errors, Elapsed: time.Second, Latencies: lat}}
	}
	at := time.Date(2026, 11, 25, 22, 46, 23, 0, time.UTC)
	r := &report{
		Config: config{Round: 10 * time.Second, StoreCalls: 30, SeedWorkers: 2},
		Store: []storeStep{
			{Workspaces: 100, At: at, Load: 1.5, growth: growth{Seed: ms(50, 0)},
				List: ms(80, 0), StateList: ms(50, 0), Update: ms(20, 0), Create: ms(102, 0)},
			{Workspaces: 1000, At: at.Add(time.Minute), Load: 2, growth: growth{Copied: 900, CopyTook: 2 * time.Second},
				List: ms(400, 0), StateList: ms(1100, 0), Update: ms(120, 2), Create: ms(90, 0)},
			{Workspaces: 4000, At: at.Add(2 * time.Minute), Load: 2.5,
				List: ms(1600, 0), StateList: ms(900, 0), Update: ms(200, 2), Create: ms(4000, 3)},
		},
	}
	md := r.Markdown()
	for _, want := range []string{
		"| 100 | 80.0 / 160.0 (3) ✓ | 50.0 / 100.0 (3) ✓ | 20.0 / 40.0 (3) ✓ | 102.0 / 204.0 (3) | 3 REST creates, 3/s, 0 retried | 1.50 | 22:46:23 |",
		"| 1000 | 400.0 / 800.0 (3) ✓ | 1100.0 / 2200.0 (3) | 120.0 / 240.0 (3), 2 errors | 90.0 / 180.0 (3) ✓ | 900 copies in 2s | 2.00 | 22:47:23 |",
		"- filtered list (search, page of 100), p50 within 1s: the largest step at which it is: **1000 workspaces**\n",
		"- list with a state filter (page of 100), p50 within 1s: the largest step at which it is: **4000 workspaces** (though past it at the smaller 1000)\n",
		"- update (PUT, a new name), p50 within 250ms: the largest step at which it is: **100 workspaces**\n",
		"- create (POST, a new id), p50 within 100ms: the largest step at which it is: **1000 workspaces** (though past it at the smaller 100)\n",
		"The last step measured was the last of `-store-steps`",
		"Errors are answers outside 2xx, in practice 503",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("the report lacks %q:\n%s", want, md)
		}
	}

	// Every operation past its threshold at the last step; the update
	// within at every one.
	r.Store = r.Store[:1]
	r.Store[0].Create = ms(300, 0)
	md = r.Markdown()
	for _, want := range []string{
		"- update (PUT, a new name), p50 within 250ms: every step, up to 100 workspaces\n",
		"- create (POST, a new id), p50 within 100ms: none of the steps (the smallest, 100 workspaces: 300.00 ms)\n",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("the report lacks %q:\n%s", want, md)
		}
	}
}
