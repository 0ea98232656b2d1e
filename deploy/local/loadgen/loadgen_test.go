package loadgen

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

func TestPercentileNearestRank(t *testing.T) {
	var lat []time.Duration
	for i := 1; i <= 100; i++ {
		lat = append(lat, time.Duration(i)*time.Millisecond)
	}
	r := &Result{Latencies: lat, Requests: len(lat), Elapsed: 2 * time.Second}
	for _, tt := range []struct {
		p    float64
		want time.Duration
	}{
		{0, 1 * time.Millisecond},
		{1, 1 * time.Millisecond},
		{50, 50 * time.Millisecond},
		{99, 99 * time.Millisecond},
		{99.5, 100 * time.Millisecond},
		{100, 100 * time.Millisecond},
	} {
		if got := r.Percentile(tt.p); got != tt.want {
			t.Errorf("p%v = %s, want %s", tt.p, got, tt.want)
		}
	}
	if got := r.RPS(); got != 50 {
		t.Errorf("RPS = %v, want 50", got)
	}
	if got := (&Result{}).Percentile(50); got != 0 {
		t.Errorf("p50 of nothing = %s, want 0", got)
	}
	if got := percentile([]time.Duration{7}, 99); got != 7 {
		t.Errorf("p99 of one sample = %s, want 7ns", got)
	}
}

func TestCombinePoolsRounds(t *testing.T) {
	a := &Result{Requests: 2, Errors: 1, Elapsed: time.Second, Latencies: []time.Duration{1, 3}}
	b := &Result{Requests: 2, Elapsed: time.Second, Latencies: []time.Duration{2, 4}}
	c := Combine(a, b)
	if c.Requests != 4 || c.Errors != 1 || c.Elapsed != 2*time.Second || c.RPS() != 2 {
		t.Fatalf("combined %+v", c)
	}
	if c.Percentile(50) != 2 || c.Percentile(100) != 4 {
		t.Fatalf("combined latencies not pooled and sorted: %v", c.Latencies)
	}
}

// Every third request of the test server fails with 500; the run must count
// exactly those as errors, and count every request.
func TestHTTPCountsNon2xxAsErrors(t *testing.T) {
	var served, failed atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Basic x" {
			t.Errorf("header not sent: %q", r.Header.Get("Authorization"))
		}
		if served.Add(1)%3 == 0 {
			failed.Add(1)
			http.Error(w, "boom", http.StatusInternalServerError)
			return
		}
		w.Write([]byte(`{"ok":true}`))
	}))
	defer srv.Close()

	op := HTTPRequest{
		Client: NewHTTPClient(4),
		Method: http.MethodPost,
		URL:    srv.URL,
		Header: http.Header{"Authorization": {"Basic x"}},
		Body:   []byte(`{}`),
	}.Op()
	res, err := Run(context.Background(), Options{Workers: 4, Duration: 200 * time.Millisecond}, op)
	if err != nil {
		t.Fatal(err)
	}
	if res.Requests == 0 || int64(res.Requests) != served.Load() {
		t.Fatalf("counted %d requests, server saw %d", res.Requests, served.Load())
	}
	if int64(res.Errors) != failed.Load() {
		t.Fatalf("counted %d errors, server failed %d", res.Errors, failed.Load())
	}
	var se *StatusError
	if !errors.As(res.FirstError, &se) || se.Status != http.StatusInternalServerError {
		t.Fatalf("first error %v, want HTTP 500", res.FirstError)
	}
	if len(res.Latencies) != res.Requests || res.Percentile(50) <= 0 || res.Percentile(99) < res.Percentile(50) {
		t.Fatalf("latencies: %d samples, p50 %s, p99 %s", len(res.Latencies), res.Percentile(50), res.Percentile(99))
	}
}

func TestHTTPCountsTransportErrors(t *testing.T) {
	srv := httptest.NewServer(http.NotFoundHandler())
	url := srv.URL
	srv.Close() // nobody listens any more

	op := HTTPRequest{Client: NewHTTPClient(1), Method: http.MethodGet, URL: url}.Op()
	res, err := Run(context.Background(), Options{Workers: 2, Duration: 50 * time.Millisecond}, op)
	if err != nil {
		t.Fatal(err)
	}
	if res.Requests == 0 || res.Errors != res.Requests {
		t.Fatalf("%d errors of %d requests, want all failed", res.Errors, res.Requests)
	}
}

// The generic form drives any function, and a cancelled run is not counted
// as a failure of the call it interrupted.
func TestRunGenericAndCancel(t *testing.T) {
	var calls atomic.Int64
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(50*time.Millisecond, cancel)
	res, err := Run(ctx, Options{Workers: 3, Duration: time.Minute}, func(ctx context.Context) error {
		calls.Add(1)
		select {
		case <-time.After(time.Millisecond):
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
	if res.Errors != 0 || res.Requests == 0 || int64(res.Requests) > calls.Load() {
		t.Fatalf("%d requests, %d errors, %d calls", res.Requests, res.Errors, calls.Load())
	}
}

func TestRunStopsAfterCalls(t *testing.T) {
	var calls atomic.Int64
	res, err := Run(context.Background(), Options{Workers: 8, Calls: 1000}, func(context.Context) error {
		if calls.Add(1)%10 == 0 {
			return errors.New("every tenth fails")
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if res.Requests != 1000 || calls.Load() != 1000 || res.Errors != 100 {
		t.Fatalf("%d requests, %d calls, %d errors; want 1000, 1000, 100", res.Requests, calls.Load(), res.Errors)
	}
	if _, err := Run(context.Background(), Options{Workers: 1}, func(context.Context) error { return nil }); err == nil {
		t.Fatal("a run without limits must be refused")
	}
}

func TestInterleaveGoesForwardThenBack(t *testing.T) {
	var mu sync.Mutex
	var order []byte
	record := func(c byte, fail bool) Op {
		return func(context.Context) error {
			mu.Lock()
			order = append(order, c)
			mu.Unlock()
			if fail {
				return errors.New("b fails")
			}
			return nil
		}
	}
	rs, err := Interleave(context.Background(), Options{Workers: 1, Calls: 8}, record('a', false), record('b', true))
	if err != nil {
		t.Fatal(err)
	}
	if got := string(order); got != "abbaabba" {
		t.Fatalf("order %q, want abbaabba", got)
	}
	ra, rb := rs[0], rs[1]
	if ra.Requests != 4 || ra.Errors != 0 || rb.Requests != 4 || rb.Errors != 4 {
		t.Fatalf("a: %d requests %d errors; b: %d requests %d errors; want 4/0 and 4/4", ra.Requests, ra.Errors, rb.Requests, rb.Errors)
	}
	if ra.Elapsed != rb.Elapsed || ra.Elapsed <= 0 {
		t.Fatalf("elapsed %s and %s: want the run's wall time in both", ra.Elapsed, rb.Elapsed)
	}
	if _, err := Interleave(context.Background(), Options{}, record('a', false), record('b', false)); err == nil {
		t.Fatal("a run without limits must be refused")
	}
	if _, err := Interleave(context.Background(), Options{Calls: 1}); err == nil {
		t.Fatal("a run of nothing must be refused")
	}

	order = nil
	rs, err = Interleave(context.Background(), Options{Workers: 1, Calls: 12}, record('a', false), record('b', false), record('c', false))
	if err != nil {
		t.Fatal(err)
	}
	if got := string(order); got != "abccbaabccba" {
		t.Fatalf("order %q, want abccbaabccba", got)
	}
	for i, r := range rs {
		if r.Requests != 4 {
			t.Fatalf("operation %d made %d calls, want 4", i, r.Requests)
		}
	}

	order = nil
	if _, err := Interleave(context.Background(), Options{Workers: 1, Calls: 10, Block: 2}, record('a', false), record('b', false)); err != nil {
		t.Fatal(err)
	}
	if got := string(order); got != "aabbbbaaaa" {
		t.Fatalf("order %q in blocks of 2, want aabbbbaaaa", got)
	}
}
