package main

import (
	"strings"
	"testing"
	"time"

	"github.com/liveproctor/workspaces/deploy/local/loadgen"
)

// TestFloodAddressesAreDistinct checks that the flood's client addresses
// are as many different IPv4 addresses as it may use, and where they
// start and turn over.
func TestFloodAddressesAreDistinct(t *testing.T) {
	seen := map[string]bool{}
	for i := range maxFloodAddresses {
		a := floodAddress(i)
		if seen[a] {
			t.Fatalf("address %d, %s, came before", i, a)
		}
		seen[a] = true
	}
	for i, want := range map[int]string{0: "10.1.0.1", 249: "10.1.0.250", 250: "10.1.1.1", 999: "10.1.3.250", maxFloodAddresses - 1: "10.1.255.250"} {
		if got := floodAddress(i); got != want {
			t.Errorf("floodAddress(%d) = %s, want %s", i, got, want)
		}
	}
}

// TestReportShowsTheLTIFlood checks the flood's section: answers by
// status (the rest together, named), rate, Redis figures and the SDK
// logins before and during the flood.
func TestReportShowsTheLTIFlood(t *testing.T) {
	lat := func(d time.Duration) []time.Duration { return []time.Duration{d, d} }
	r := &report{LTIFlood: &ltiFlood{
		Logins: 100000, Addresses: 1000, MaxMemory: 65 << 20,
		Answers: map[int]int{302: 60000, 429: 10000, 503: 29990, 500: 6, 0: 4},
		Took:    50 * time.Second, MemoryBefore: 1 << 20, MemoryAfter: 1<<20 + 30000000, MemoryPeak: 40 << 20,
		KeysLeft: 60000, OneKeyUsage: 424, OOMErrors: 2,
		SDKBefore: pacedRun{Result: &loadgen.Result{Requests: 2, Latencies: lat(2 * time.Millisecond)}, Failures: map[int]int{}},
		SDKDuring: pacedRun{Result: &loadgen.Result{Requests: 2, Errors: 2, Latencies: lat(9 * time.Millisecond)}, Failures: map[int]int{503: 1, 0: 1}},
	}}
	md := r.Markdown()
	for _, want := range []string{
		"## LTI 1.3 login flood",
		"100000 `GET /lti/v1p3/login` initiations",
		"from 1000 client addresses",
		"refuses writes past 65.0 MiB",
		"| answers 302 | 60000 |",
		"| answers 429 | 10000 |",
		"| answers 503 | 29990 |",
		"| answers, other | 10 (no answer: 4, 500: 6) |",
		"| flood: duration, rate | 50s, 2000/s |",
		"| Redis used_memory before / after / peak | 1.0 MiB / 29.6 MiB / 40.0 MiB |",
		"| lti13:login:* keys left | 60000 |",
		"| bytes per pending login (used_memory growth / keys left; the growth holds the SDK logins' tokens too) | 500 (MEMORY USAGE of one: 424) |",
		"| Redis OOM errors (INFO errorstats) | 2 |",
		"| before the flood | 2 | 0 |  | 2.00 ms | 2.00 ms |",
		"| during the flood | 2 | 2 | no answer: 1, 503: 1 | 9.00 ms | 9.00 ms |",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("the report lacks %q:\n%s", want, md)
		}
	}
}
