package e2e

import (
	"errors"
	"fmt"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/liveproctor/workspaces/pkg/testenv"
)

// load sends GET /api/workspace/root from several callers, each on fresh
// connections, until stop is closed, and sorts what came back.
type load struct {
	ok, unavailable, refused atomic.Int64
	mu                       sync.Mutex
	failures                 []string
}

func (l *load) run(url string, callers int, stop <-chan struct{}) *sync.WaitGroup {
	client := &http.Client{Timeout: 20 * time.Second, Transport: &http.Transport{DisableKeepAlives: true}}
	var wg sync.WaitGroup
	for range callers {
		wg.Go(func() {
			for {
				select {
				case <-stop:
					return
				default:
				}
				req, _ := http.NewRequest(http.MethodGet, url+"/api/workspace/root", nil)
				req.SetBasicAuth(rootKey, rootSecret)
				resp, err := client.Do(req)
				switch {
				case notConnected(err):
					l.refused.Add(1) // the listener is closed: not an in-flight request
					// Pacing, not a wait: no busy loop against a closed port.
					time.Sleep(10 * time.Millisecond)
				case err != nil:
					l.fail(err.Error())
				default:
					resp.Body.Close()
					switch resp.StatusCode {
					case http.StatusOK:
						l.ok.Add(1)
					case http.StatusServiceUnavailable:
						l.unavailable.Add(1)
					default:
						l.fail(resp.Status)
					}
				}
			}
		})
	}
	return &wg
}

// notConnected reports a request that never reached the server: refused,
// or reset while still connecting (it sat in the closed listener's backlog).
func notConnected(err error) bool {
	var op *net.OpError
	return errors.Is(err, syscall.ECONNREFUSED) || errors.As(err, &op) && op.Op == "dial"
}

func (l *load) fail(what string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.failures = append(l.failures, what)
}

// failed returns the failures so far.
func (l *load) failed() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]string(nil), l.failures...)
}

// waitServed waits until the load has had n requests served.
func (l *load) waitServed(t *testing.T, n int64) {
	t.Helper()
	testenv.Eventually(t, 30*time.Second, func() error {
		if got := l.ok.Load(); got < n {
			return fmt.Errorf("%d served, %d failed: %v", got, len(l.failed()), l.failed())
		}
		return nil
	}, "the load is served")
}

// balance stands in for a load balancer: it checks /readyz every 50 ms (its
// probe interval: pacing, not a wait) and closes the returned channel, so
// callers stop sending, once it fails.
func balance(url string) <-chan struct{} {
	out := make(chan struct{})
	go func() {
		defer close(out)
		client := &http.Client{Timeout: time.Second}
		for {
			resp, err := client.Get(url + "/readyz")
			if err != nil {
				return
			}
			resp.Body.Close()
			if resp.StatusCode != http.StatusOK {
				return
			}
			time.Sleep(50 * time.Millisecond)
		}
	}()
	return out
}

// SIGTERM to the gateway under load: /readyz fails at once, so a load
// balancer stops sending; the gateway keeps serving for DRAIN_DELAY, lets
// what it accepted finish, closes, and exits 0. No request fails.
func TestGatewaySIGTERMUnderLoadLosesNoRequest(t *testing.T) {
	s := startOwnStack(t, "DRAIN_DELAY=500ms")
	var l load
	wg := l.run(s.GatewayURL, 16, balance(s.GatewayURL))
	l.waitServed(t, 100)
	before := l.ok.Load()
	if err := s.Signal("gateway", syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if err := s.Wait("gateway", 30*time.Second); err != nil {
		t.Fatalf("gateway exit: %v", err)
	}
	wg.Wait()
	if len(l.failures) > 0 || l.refused.Load() > 0 || l.unavailable.Load() > 0 {
		t.Fatalf("%d requests failed (%v), %d refused, %d answered 503", len(l.failures), l.failures, l.refused.Load(), l.unavailable.Load())
	}
	if l.ok.Load() <= before {
		t.Fatalf("no request was served after SIGTERM (%d before, %d in all)", before, l.ok.Load())
	}
	t.Logf("%d requests served, %d of them after SIGTERM", l.ok.Load(), l.ok.Load()-before)
}

// SIGTERM to the workspace service under load: calls in flight finish;
// later ones are 503 from the gateway (the service is gone), never 500 or
// a broken connection; and the service exits 0.
func TestWorkspaceServiceSIGTERMUnderLoadLosesNoRequest(t *testing.T) {
	s := startOwnStack(t)
	var l load
	stop := make(chan struct{})
	wg := l.run(s.GatewayURL, 16, stop)
	l.waitServed(t, 100)
	if err := s.Signal("workspace", syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if err := s.Wait("workspace", 30*time.Second); err != nil {
		t.Fatalf("workspace service exit: %v", err)
	}
	testenv.Eventually(t, 30*time.Second, func() error {
		if l.unavailable.Load() == 0 {
			return fmt.Errorf("no 503 yet (%d failures: %v)", len(l.failed()), l.failed())
		}
		return nil
	}, "the gateway answers 503 once the workspace service is gone")
	close(stop)
	wg.Wait()
	if len(l.failures) > 0 {
		t.Fatalf("%d requests failed, first: %s", len(l.failures), l.failures[0])
	}
	if l.ok.Load() == 0 || l.unavailable.Load() == 0 || l.refused.Load() != 0 {
		t.Fatalf("ok %d, 503 %d, refused %d: want successes, then 503s", l.ok.Load(), l.unavailable.Load(), l.refused.Load())
	}
}
