package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/liveproctor/workspaces/deploy/local/stack"
	"github.com/liveproctor/workspaces/pkg/testenv"
)

// Store outages under load: a store is killed (a crash: connections are
// refused) or paused with SIGSTOP (a hang: connections are accepted and
// nothing is answered) while clients keep calling. Every answer must be 2xx,
// or 503 UNAVAILABLE with Retry-After in the contract's error shape, and
// come well before the request deadline; readiness reports the outage;
// requests that do not need the store keep working; once the store is
// back, service resumes without a restart, and every acknowledged create
// can be read. Each case runs on a stack of its own.
//
// The latencies during the outage and the time to recover are logged (go
// test -v -run Outage ./deploy/local/e2e/), not asserted: the bound below
// only tells an answer from a hang.

// defaultStoreTimeouts undoes the shared stack's store timeouts: the
// outage tests run with the defaults.
var defaultStoreTimeouts = []string{"MONGODB_TIMEOUT=", "REDIS_TIMEOUT="}

// hangBound is how soon every answer must come: half of the stack's
// REQUEST_TIMEOUT (6s), so a request that waited for the deadline fails.
const hangBound = 3 * time.Second

// outage is one way for a store to fail, and how it comes back.
type outage struct {
	name    string
	fail    func(*testenv.Server) error
	restore func(context.Context, *testenv.Server) error
	lossy   bool // the store comes back without what it held in memory
}

var outages = []outage{
	{name: "killed", fail: (*testenv.Server).Kill, restore: func(ctx context.Context, s *testenv.Server) error { return s.Restart(ctx) }, lossy: true},
	{name: "hung", fail: (*testenv.Server).Pause, restore: func(_ context.Context, s *testenv.Server) error { return s.Resume() }},
}

func TestMongoOutageUnderCreateLoad(t *testing.T) {
	for _, o := range outages {
		t.Run(o.name, func(t *testing.T) {
			s := startOwnStack(t, defaultStoreTimeouts...)
			root := asRoot(t).on(s)
			l := newLoad(s, "create")
			var mu sync.Mutex
			var created []string
			l.run(4, func(ctx context.Context, worker, i int) answer {
				id := fmt.Sprintf("outage-%s-%d-%d", o.name, worker, i)
				a := l.send(ctx, "create", http.MethodPost, "/api/workspace",
					map[string]any{"id": id, "name": "Outage " + id, "type": "DISTRICT"}, basic())
				if a.status/100 == 2 {
					mu.Lock()
					created = append(created, id)
					mu.Unlock()
				}
				return a
			})
			p := l.outage(t, s.FerretDB, o, func() {
				// What needs no store keeps working.
				for _, path := range []string{"/openapi.json", "/healthz", "/sdk/v1/sdk.js"} {
					anonymous(t).on(s).get(path).wantStatus(http.StatusOK)
				}
			})
			l.stop()
			l.check(t, p, nil)

			mu.Lock()
			defer mu.Unlock()
			if len(created) == 0 {
				t.Fatal("no create succeeded")
			}
			for _, id := range created {
				root.get("/api/workspace/" + id).wantStatus(http.StatusOK)
			}
			t.Logf("all %d acknowledged creates are readable", len(created))
		})
	}
}

func TestRedisOutageUnderLoginLoad(t *testing.T) {
	for _, o := range outages {
		t.Run(o.name, func(t *testing.T) {
			s := startOwnStack(t, defaultStoreTimeouts...)
			root := asRoot(t).on(s)
			d := root.create(unique(t, "d"), nil)
			login := map[string]any{"email": "ada@example.com", "workspaceId": d.WorkspaceID}
			token := root.login("ada@example.com", d.WorkspaceID).Auth
			l := newLoad(s, "login", "session")
			l.run(4, func(ctx context.Context, worker, i int) answer {
				if worker%2 == 0 {
					return l.send(ctx, "login", http.MethodPost, "/api/login/sdk", login, basic())
				}
				return l.send(ctx, "session", http.MethodGet, "/api/sdk/session", nil, "Bearer "+token)
			})
			// Workspace reads and writes need no Redis: every one succeeds.
			var mu sync.Mutex
			var unrelated []answer
			l.run(1, func(ctx context.Context, worker, i int) answer {
				id := fmt.Sprintf("redis-outage-%s-%d", o.name, i)
				a := l.send(ctx, "create", http.MethodPost, "/api/workspace",
					map[string]any{"id": id, "name": "Outage " + id, "type": "DISTRICT"}, basic())
				b := l.send(ctx, "get", http.MethodGet, "/api/workspace/"+d.WorkspaceID, nil, basic())
				if ctx.Err() == nil { // not cut off by stop
					mu.Lock()
					unrelated = append(unrelated, a, b)
					mu.Unlock()
				}
				return a
			})
			p := l.outage(t, s.Redis, o, nil)
			l.stop()
			allow := map[string][]int{"create": {http.StatusOK}, "get": {http.StatusOK}}
			if o.lossy {
				// The test's Redis keeps nothing on disk: after a crash the
				// token is gone.
				allow["session"] = []int{http.StatusUnauthorized}
			}
			l.check(t, p, allow)
			mu.Lock()
			defer mu.Unlock()
			for _, a := range unrelated {
				if a.status != http.StatusOK {
					t.Errorf("%s with Redis down: %d %s", a.op, a.status, a.body)
				}
			}
			if !o.lossy {
				// A hang loses nothing: the token issued before it still works.
				anonymous(t).on(s).do(http.MethodGet, "/api/sdk/session", nil, "Authorization", "Bearer "+token).
					wantStatus(http.StatusOK)
			}
		})
	}
}

// basic is the root key pair's Authorization header.
func basic() string {
	r, _ := http.NewRequest(http.MethodGet, "/", nil)
	r.SetBasicAuth(rootKey, rootSecret)
	return r.Header.Get("Authorization")
}

// answer is what one request got.
type answer struct {
	op         string
	sent, done time.Time
	status     int // 0: no answer (err says why)
	err        error
	header     http.Header
	body       []byte
}

func (a answer) latency() time.Duration { return a.done.Sub(a.sent) }

// outageLoad calls a stack from several goroutines and keeps every answer.
type outageLoad struct {
	s         *stack.Stack
	needStore map[string]bool // the operations that need the failed store
	http      *http.Client
	ctx       context.Context
	cancel    context.CancelFunc
	wg        sync.WaitGroup

	mu      sync.Mutex
	answers []answer
}

func newLoad(s *stack.Stack, needStore ...string) *outageLoad {
	ctx, cancel := context.WithCancel(context.Background())
	l := &outageLoad{s: s, needStore: map[string]bool{}, http: &http.Client{Timeout: 30 * time.Second}, ctx: ctx, cancel: cancel}
	for _, op := range needStore {
		l.needStore[op] = true
	}
	return l
}

// run starts workers calling call in a loop until stop.
func (l *outageLoad) run(workers int, call func(ctx context.Context, worker, i int) answer) {
	for w := range workers {
		l.wg.Go(func() {
			for i := 0; l.ctx.Err() == nil; i++ {
				a := call(l.ctx, w, i)
				if l.ctx.Err() != nil && a.status == 0 {
					return // cut off by stop
				}
				l.mu.Lock()
				l.answers = append(l.answers, a)
				l.mu.Unlock()
			}
		})
	}
}

func (l *outageLoad) stop() {
	l.cancel()
	l.wg.Wait()
}

// send makes one request with a JSON body (when not nil) and an
// Authorization header.
func (l *outageLoad) send(ctx context.Context, op, method, path string, body any, authorization string) answer {
	var r io.Reader
	if body != nil {
		data, _ := json.Marshal(body)
		r = bytes.NewReader(data)
	}
	a := answer{op: op, sent: time.Now()}
	req, err := http.NewRequestWithContext(ctx, method, l.s.GatewayURL+path, r)
	if err != nil {
		a.err = err
		return a
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	req.Header.Set("Authorization", authorization)
	resp, err := l.http.Do(req)
	if err == nil {
		a.body, err = io.ReadAll(resp.Body)
		resp.Body.Close()
		a.status, a.header = resp.StatusCode, resp.Header
	}
	a.err, a.done = err, time.Now()
	return a
}

// since returns the answers to requests sent at or after t.
func (l *outageLoad) since(t time.Time) []answer {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []answer
	for _, a := range l.answers {
		if !a.sent.Before(t) {
			out = append(out, a)
		}
	}
	return out
}

// phases are the moments an outage test marks.
type phases struct {
	failed, restored, recovered time.Time
}

// outage waits for the load to succeed, fails the store, waits for 503s
// and for readiness to report it, runs during (if not nil), restores the
// store and waits until the load succeeds again and the stack is ready.
func (l *outageLoad) outage(t *testing.T, store *testenv.Server, o outage, during func()) phases {
	t.Helper()
	var p phases
	count := func(from time.Time, ok func(answer) bool) int {
		n := 0
		for _, a := range l.since(from) {
			if ok(a) {
				n++
			}
		}
		return n
	}
	start := time.Now()
	testenv.Eventually(t, 30*time.Second, func() error {
		if n := count(start, func(a answer) bool { return a.status/100 == 2 }); n < 20 {
			return fmt.Errorf("%d successes", n)
		}
		return nil
	}, "the load succeeds before the outage")

	p.failed = time.Now()
	if err := o.fail(store); err != nil {
		t.Fatal(err)
	}
	ready := testenv.HTTPOK(l.s.GatewayURL + "/readyz")
	testenv.Eventually(t, 30*time.Second, func() error {
		if n := count(p.failed, func(a answer) bool { return a.status == http.StatusServiceUnavailable }); n < 20 {
			return fmt.Errorf("%d answers 503", n)
		}
		if ready(context.Background()) == nil {
			return fmt.Errorf("/readyz answers 200")
		}
		return nil
	}, "503s and readiness reporting the outage")
	if during != nil {
		during()
	}

	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := o.restore(ctx, store); err != nil {
		t.Fatal(err)
	}
	p.restored = time.Now()
	testenv.Eventually(t, 30*time.Second, func() error {
		for _, a := range l.since(p.restored) {
			if a.status/100 == 2 && l.needStore[a.op] {
				if p.recovered.IsZero() || a.done.Before(p.recovered) {
					p.recovered = a.done
				}
			}
		}
		if p.recovered.IsZero() {
			return fmt.Errorf("no success since the store's return")
		}
		return ready(context.Background())
	}, "service resumes after the store's return")
	return p
}

// check fails the test for every answer after the failure that is neither
// 2xx, nor 503 in the contract's shape with Retry-After, nor one allow
// names for its operation, and for every one that waited hangBound or
// longer (counted from the failure for a request already in flight); it
// logs those waits for the store's operations during the outage and the
// time to recover.
func (l *outageLoad) check(t *testing.T, p phases, allow map[string][]int) {
	t.Helper()
	l.mu.Lock()
	defer l.mu.Unlock()
	bad := 0
	fail := func(a answer, format string, args ...any) {
		if bad++; bad <= 10 {
			t.Errorf("%s sent %s after the failure: %s", a.op, a.sent.Sub(p.failed).Round(time.Millisecond), fmt.Sprintf(format, args...))
		}
	}
	var during []time.Duration
	unavailable := 0
	for _, a := range l.answers {
		if !a.done.After(p.failed) {
			continue // before the outage: how fast a loaded machine serves is not this test's business
		}
		// What the outage cost: the wait from the failure on, for a request
		// already in flight when the store failed.
		waited := a.done.Sub(a.sent)
		if a.sent.Before(p.failed) {
			waited = a.done.Sub(p.failed)
		}
		if a.status == 0 {
			fail(a, "no answer: %v", a.err)
			continue
		}
		if waited >= hangBound {
			fail(a, "answered %d after %s (%s since the failure)", a.status, a.latency(), waited)
		}
		switch {
		case a.status/100 == 2, slices.Contains(allow[a.op], a.status):
		case a.status == http.StatusServiceUnavailable:
			unavailable++
			if err := unavailableShape(a); err != nil {
				fail(a, "%v", err)
			}
		default:
			fail(a, "status %d: %s", a.status, a.body)
		}
		if l.needStore[a.op] && a.done.After(p.failed) && a.sent.Before(p.restored) { // in flight during the outage
			during = append(during, waited)
		}
	}
	if bad > 10 {
		t.Errorf("... and %d more", bad-10)
	}
	slices.Sort(during)
	pct := func(q float64) time.Duration {
		if len(during) == 0 {
			return 0
		}
		return during[min(len(during)-1, int(q*float64(len(during))))].Round(time.Millisecond)
	}
	t.Logf("%d answers, %d of them 503; %d calls needing the store were in flight during the outage, waiting (from the failure on) p50 %s, p99 %s, max %s; "+
		"first success %s after the store's return",
		len(l.answers), unavailable, len(during), pct(0.50), pct(0.99), pct(1),
		p.recovered.Sub(p.restored).Round(time.Millisecond))
}

// unavailableShape checks a 503: Retry-After in whole seconds, at least
// one, and the error body naming UNAVAILABLE with the request's id.
func unavailableShape(a answer) error {
	if s, err := strconv.Atoi(a.header.Get("Retry-After")); err != nil || s < 1 {
		return fmt.Errorf("503 with Retry-After %q", a.header.Get("Retry-After"))
	}
	var e struct {
		Error struct {
			Code      int    `json:"code"`
			Status    string `json:"status"`
			Message   string `json:"message"`
			RequestID string `json:"requestId"`
		} `json:"error"`
	}
	if err := json.Unmarshal(a.body, &e); err != nil || e.Error.Code != http.StatusServiceUnavailable ||
		e.Error.Status != "UNAVAILABLE" || e.Error.Message == "" || e.Error.RequestID == "" || e.Error.RequestID != a.header.Get("X-Request-Id") {
		return fmt.Errorf("503 with body %s", a.body)
	}
	return nil
}
