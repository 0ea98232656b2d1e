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
