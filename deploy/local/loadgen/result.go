package loadgen

import (
	"fmt"
	"math"
	"slices"
	"time"
)

// Result is what one run saw.
type Result struct {
	// Requests counts every call made, failed ones included.
	Requests int
	// Errors counts the failed calls (for HTTP: transport errors and
	// non-2xx answers).
	Errors int
	// FirstError is one failure, kept to say what went wrong.
	FirstError error
	// Elapsed is the wall time from the first call to the last answer.
	Elapsed time.Duration
	// Latencies holds every call's latency, sorted ascending.
	Latencies []time.Duration
}

func merge(parts []worker, elapsed time.Duration) *Result {
	r := &Result{Elapsed: elapsed}
	for _, w := range parts {
		r.Latencies = append(r.Latencies, w.latencies...)
		r.Errors += w.errors
		if r.FirstError == nil {
			r.FirstError = w.firstErr
		}
	}
	r.Requests = len(r.Latencies)
	slices.Sort(r.Latencies)
	return r
}

// RPS returns the calls completed per second.
func (r *Result) RPS() float64 {
	if r.Elapsed <= 0 {
		return 0
	}
	return float64(r.Requests) / r.Elapsed.Seconds()
}

// Percentile returns the latency at or below which p percent (0 to 100)
// of the calls finished, by the nearest-rank method; 0 without calls.
func (r *Result) Percentile(p float64) time.Duration {
	return percentile(r.Latencies, p)
}

// percentile reads the nearest-rank percentile of sorted latencies.
func percentile(sorted []time.Duration, p float64) time.Duration {
	n := len(sorted)
	if n == 0 {
		return 0
	}
	// ceil(p% of n), forgiving the rounding error of p*n/100 at exact ranks.
	rank := int(math.Ceil(p*float64(n)/100 - 1e-9))
	rank = min(max(rank, 1), n)
	return sorted[rank-1]
}

// Combine pools several runs of the same operation (the rounds of an A B A B
// comparison) into one result: requests, errors and elapsed time add up,
// latencies are pooled.
func Combine(runs ...*Result) *Result {
	c := &Result{}
	for _, r := range runs {
		c.Requests += r.Requests
		c.Errors += r.Errors
		c.Elapsed += r.Elapsed
		c.Latencies = append(c.Latencies, r.Latencies...)
		if c.FirstError == nil {
			c.FirstError = r.FirstError
		}
	}
	slices.Sort(c.Latencies)
	return c
}

// String summarises the result on one line.
func (r *Result) String() string {
	s := fmt.Sprintf("%d req in %s: %.0f req/s, p50 %s, p99 %s, %d errors",
		r.Requests, r.Elapsed.Round(time.Millisecond), r.RPS(), r.Percentile(50), r.Percentile(99), r.Errors)
	if r.FirstError != nil {
		s += fmt.Sprintf(" (first: %v)", r.FirstError)
	}
	return s
}
