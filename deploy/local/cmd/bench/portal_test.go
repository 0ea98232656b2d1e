package main

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/liveproctor/workspaces/deploy/local/loadgen"
)

// TestSessionFromOpening checks what the bench takes from a link's
// opening: the cookie's token and the session's end from its Max-Age, and
// a refusal or an answer without the cookie as an error that never
// quotes a token.
func TestSessionFromOpening(t *testing.T) {
	now := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	const token = "Zq3vS2l0ZXNlY3JldHRva2VuMDEyMzQ1Njc4OWFiY2Q"
	answer := func(status int, cookies ...*http.Cookie) *http.Response {
		rec := httptest.NewRecorder()
		for _, c := range cookies {
			http.SetCookie(rec, c)
		}
		rec.WriteHeader(status)
		return rec.Result()
	}
	session := &http.Cookie{Name: portalCookie, Value: token, Path: "/portal", MaxAge: 3599, HttpOnly: true, Secure: true}

	s, err := sessionFromOpening(answer(http.StatusSeeOther, &http.Cookie{Name: "other", Value: "x"}, session), now)
	if err != nil {
		t.Fatalf("an opening with the cookie: %v", err)
	}
	if s.Token != token || !s.Ends.Equal(now.Add(3599*time.Second)) {
		t.Errorf("got token %q ending %s, want the cookie's, ending %s", s.Token, s.Ends, now.Add(3599*time.Second))
	}

	for name, resp := range map[string]*http.Response{
		"refused (the link was spent)": answer(http.StatusUnauthorized),
		"refused, with a cookie":       answer(http.StatusForbidden, session),
		"no cookie":                    answer(http.StatusSeeOther),
		"the cookie cleared":           answer(http.StatusSeeOther, &http.Cookie{Name: portalCookie, Value: token, MaxAge: -1}),
	} {
		_, err := sessionFromOpening(resp, now)
		if err == nil {
			t.Errorf("%s: no error", name)
			continue
		}
		if strings.Contains(err.Error(), token) {
			t.Errorf("%s: the error quotes the token: %v", name, err)
		}
	}
}

// TestPortalDurationCoversEveryRun checks the time the session must last:
// both sides' warm-ups and rounds as wrk runs them (whole seconds, at
// least one), and the slack.
func TestPortalDurationCoversEveryRun(t *testing.T) {
	for _, c := range []struct {
		cfg  config
		want time.Duration
	}{
		{config{Round: 10 * time.Second, Rounds: 2, Warmup: 2 * time.Second}, 44*time.Second + portalSlack},
		{config{Round: 100 * time.Millisecond, Rounds: 3, Warmup: 0}, 6*time.Second + portalSlack},
		{config{Round: 1500 * time.Millisecond, Rounds: 2, Warmup: 400 * time.Millisecond}, 10*time.Second + portalSlack},
	} {
		if got := portalDuration(c.cfg); got != c.want {
			t.Errorf("round %s, %d rounds, warm-up %s: %s, want %s", c.cfg.Round, c.cfg.Rounds, c.cfg.Warmup, got, c.want)
		}
	}
}

// TestPortalFaults checks when the scenario fails: a page answering 401
// after the rounds names the ended session; any answer that was not 200,
// on either side, is counted.
func TestPortalFaults(t *testing.T) {
	round := func(requests, errs int) measurement {
		res := &loadgen.Result{Requests: requests, Errors: errs, Elapsed: time.Second}
		if errs > 0 {
			res.FirstError = errors.New("wrk: answers with status ≥ 400")
		}
		return measurement{Result: res}
	}
	clean := &portalBench{Page: []measurement{round(100, 0), round(100, 0)}, REST: []measurement{round(300, 0), round(300, 0)}}
	if err := clean.faults(http.StatusOK); err != nil {
		t.Errorf("a clean run fails: %v", err)
	}
	for _, c := range []struct {
		name   string
		b      *portalBench
		status int
		want   []string
	}{
		{"the session ended in the second round", &portalBench{Page: []measurement{round(100, 0), round(120, 120)}, REST: clean.REST},
			http.StatusUnauthorized, []string{"the portal session has ended: the page answers 401", "the page: 120 of 220 answers were not 200"}},
		{"the REST route refused some", &portalBench{Page: clean.Page, REST: []measurement{round(300, 3), round(300, 0)}},
			http.StatusOK, []string{"the REST route: 3 of 600 answers were not 200"}},
		{"the page fails after the rounds", clean, http.StatusServiceUnavailable, []string{"after the rounds the page answers 503"}},
	} {
		err := c.b.faults(c.status)
		if err == nil {
			t.Errorf("%s: no error", c.name)
			continue
		}
		for _, want := range c.want {
			if !strings.Contains(err.Error(), want) {
				t.Errorf("%s: %q lacks %q", c.name, err, want)
			}
		}
	}
}

// TestReportShowsThePortal checks the portal's section: each side pooled
// and by round, with throughput, percentiles, errors and CPU per request,
// and the page's cost over the REST route's; and its rows in the CPU
// table.
func TestReportShowsThePortal(t *testing.T) {
	round := func(name string, requests int, p50 time.Duration, load float64, cpu ...processCPU) measurement {
		lat := make([]time.Duration, 100)
		for i := range lat {
			lat[i] = p50
		}
		lat[99] = 4 * p50
		return measurement{Scenario: name, Callers: 64, CPU: cpu, Load: load,
			Result: &loadgen.Result{Requests: requests, Elapsed: 10 * time.Second, Latencies: lat}}
	}
	// Per request: the page 1,000 µs of server CPU (gateway 400, workspace
	// 300, redis-server 100, ferretdb 200), the REST route 250 µs
	// (150, 50, 25, 25); wrk's own is left out.
	page := func(load float64) measurement {
		return round(portalPageName, 10000, 20*time.Millisecond, load, processCPU{"gateway", 4 * time.Second},
			processCPU{"workspace", 3 * time.Second}, processCPU{"redis-server", time.Second},
			processCPU{"ferretdb", 2 * time.Second}, processCPU{"wrk", 5 * time.Second})
	}
	rest := func(load float64) measurement {
		return round(portalRESTName, 40000, 5*time.Millisecond, load, processCPU{"gateway", 6 * time.Second},
			processCPU{"workspace", 2 * time.Second}, processCPU{"redis-server", time.Second},
			processCPU{"ferretdb", time.Second}, processCPU{"wrk", 5 * time.Second})
	}
	r := &report{
		Config: config{Round: 10 * time.Second, Rounds: 2, Conns: 64},
		Portal: &portalBench{Registrations: 4, Deployments: 6,
			Page: []measurement{page(1.5), page(2.5)}, REST: []measurement{rest(1), rest(2)}},
	}
	md := r.Markdown()
	for _, want := range []string{
		"## The administrator's portal: a page against its REST route",
		"4 registrations, 6 deployments in all. wrk at 64 connections, rounds of 10s",
		"| side | requests | req/s | p50 | p90 | p99 | max | errors | **servers, µs per request** | gateway | workspace | redis-server | ferretdb | load avg |",
		"| the page, 2 rounds | 20000 | 1000 | 20.00 ms | 20.00 ms | 20.00 ms | 80.00 ms | 0 | **1000** | 400 | 300 | 100 | 200 | 2.00 |",
		"| the REST route, 2 rounds | 80000 | 4000 | 5.00 ms | 5.00 ms | 5.00 ms | 20.00 ms | 0 | **250** | 150 | 50 | 25 | 25 | 1.50 |",
		"|   round 1: REST route | 40000 | 4000 | 5.00 ms | 5.00 ms | 5.00 ms | 20.00 ms | 0 | **250** | 150 | 50 | 25 | 25 | 1.00 |",
		"|   round 2: page | 10000 | 1000 | 20.00 ms | 20.00 ms | 20.00 ms | 80.00 ms | 0 | **1000** | 400 | 300 | 100 | 200 | 2.50 |",
		"The page costs the servers **4.00×** the REST route's CPU per request (gateway 2.67×, workspace 6.00×, redis-server 4.00×, ferretdb 8.00×), at 0.25× its throughput.",
		"| " + portalPageName + " | 64 | **1000** |",
		"| " + portalRESTName + " | 64 | **250** |",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("the report lacks %q:\n%s", want, md)
		}
	}
	if strings.Index(md, "|   round 1: REST route") > strings.Index(md, "|   round 1: page") {
		t.Error("the rounds are not in the order they ran (the REST route first)")
	}
}

// TestWithoutURLKeepsTheCauseOnly checks that an error about a portal
// link's request keeps its cause and drops the URL, whose path is the
// link's secret.
func TestWithoutURLKeepsTheCauseOnly(t *testing.T) {
	const secret = "Zq3vS2l0ZXNlY3JldHRva2VuMDEyMzQ1Njc4OWFiY2Q"
	cause := errors.New("connection refused")
	err := withoutURL(&url.Error{Op: "Post", URL: "http://127.0.0.1:1/portal/open/" + secret, Err: cause})
	if !errors.Is(err, cause) || strings.Contains(err.Error(), secret) {
		t.Errorf("got %v, want the cause without the URL", err)
	}
	if other := errors.New("other"); withoutURL(other) != other {
		t.Error("an error without a URL is changed")
	}
}
