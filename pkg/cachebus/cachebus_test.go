package cachebus_test

import (
	"context"
	"fmt"
	"log/slog"
	"reflect"
	"regexp"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/liveproctor/workspaces/pkg/cachebus"
	"github.com/liveproctor/workspaces/pkg/testenv"
)

// waitFor bounds every wait of these tests; none is a speed target.
const waitFor = 10 * time.Second

var quiet = slog.New(slog.DiscardHandler)

// recorder is a Handler that remembers what it was told.
type recorder struct {
	mu      sync.Mutex
	changes []cachebus.Change
	lost    int
}

func (r *recorder) Changed(c cachebus.Change) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.changes = append(r.changes, c)
}

func (r *recorder) Lost() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.lost++
}

func (r *recorder) state() ([]cachebus.Change, int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]cachebus.Change(nil), r.changes...), r.lost
}

// waitLost waits until r has been told Lost at least n times.
func (r *recorder) waitLost(t *testing.T, n int, why string) {
	t.Helper()
	testenv.Eventually(t, waitFor, func() error {
		if _, lost := r.state(); lost < n {
			return fmt.Errorf("Lost %d times", lost)
		}
		return nil
	}, "%s: Lost at least %d times", why, n)
}

// waitChanges waits until r has heard want, in order, and nothing else.
func (r *recorder) waitChanges(t *testing.T, want ...cachebus.Change) {
	t.Helper()
	testenv.Eventually(t, waitFor, func() error {
		if got, _ := r.state(); !reflect.DeepEqual(got, want) {
			return fmt.Errorf("heard %+v", got)
		}
		return nil
	}, "the changes heard")
}

func startRedis(t *testing.T) *testenv.Server {
	t.Helper()
	srv, err := testenv.StartRedis(context.Background(), testenv.RedisOptions{Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = srv.Stop() })
	return srv
}

func client(t *testing.T, addrs ...string) redis.UniversalClient {
	t.Helper()
	c := redis.NewUniversalClient(&redis.UniversalOptions{Addrs: addrs, DialTimeout: time.Second,
		ReadTimeout: time.Second, WriteTimeout: time.Second, MaxRetries: -1})
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// run starts Run for h until the test ends, and waits for its end then.
func run(t *testing.T, c redis.UniversalClient, h cachebus.Handler) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		cachebus.Run(ctx, c, h, quiet)
	}()
	t.Cleanup(func() {
		cancel()
		<-done
	})
}

func publish(t *testing.T, c redis.UniversalClient, change cachebus.Change) {
	t.Helper()
	if err := cachebus.Publish(context.Background(), c, change); err != nil {
		t.Fatal(err)
	}
}

var (
	revoked = cachebus.Change{Kind: cachebus.KeyPairsChanged, WorkspaceID: "w1", AppKeys: []string{"k1"}}
	deleted = cachebus.Change{Kind: cachebus.WorkspaceChanged, WorkspaceID: "w2", AppKeys: []string{"k2", "k3"}}
)

// pings returns how many PINGs redis-server at addr has answered.
func pings(t *testing.T, c redis.UniversalClient) int {
	t.Helper()
	info, err := c.Info(context.Background(), "commandstats").Result()
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`cmdstat_ping:calls=(\d+)`).FindStringSubmatch(info)
	if m == nil {
		return 0
	}
	n, _ := strconv.Atoi(m[1])
	return n
}

// Every subscriber hears every change, in order; something else on the
// channel is ignored; a quiet subscription is kept alive by PINGs, and
// nothing is reported lost but the subscription's start.
func TestChangesReachEverySubscriber(t *testing.T) {
	c := client(t, startRedis(t).Addr())
	a, b := &recorder{}, &recorder{}
	run(t, c, a)
	run(t, c, b)
	a.waitLost(t, 1, "subscribed")
	b.waitLost(t, 1, "subscribed")

	publish(t, c, revoked)
	if err := c.Publish(context.Background(), cachebus.Channel, `{"kind":"nonsense"}`).Err(); err != nil {
		t.Fatal(err)
	}
	if err := c.Publish(context.Background(), cachebus.Channel, "not json").Err(); err != nil {
		t.Fatal(err)
	}
	publish(t, c, deleted)
	a.waitChanges(t, revoked, deleted)
	b.waitChanges(t, revoked, deleted)

	// Quiet: each subscription is PINGed (twice or more here), and
	// answers.
	before := pings(t, c)
	testenv.Eventually(t, waitFor, func() error {
		if n := pings(t, c) - before; n < 4 {
			return fmt.Errorf("%d PINGs", n)
		}
		return nil
	}, "the subscriptions are PINGed")
	for _, r := range []*recorder{a, b} {
		if _, lost := r.state(); lost != 1 {
			t.Fatalf("Lost %d times in steady state, want 1 (the subscription's start)", lost)
		}
	}
}

// A subscriber whose Redis goes away is told Lost, and again once it has
// subscribed anew; then it hears changes again.
func TestLostWhenRedisRestarts(t *testing.T) {
	srv := startRedis(t)
	c := client(t, srv.Addr())
	r := &recorder{}
	run(t, c, r)
	r.waitLost(t, 1, "subscribed")

	if err := srv.Stop(); err != nil {
		t.Fatal(err)
	}
	r.waitLost(t, 2, "Redis stopped")
	if err := srv.Restart(context.Background()); err != nil {
		t.Fatal(err)
	}
	r.waitLost(t, 3, "subscribed again")
	publish(t, c, revoked)
	r.waitChanges(t, revoked)
}

// A Redis that hangs (a connection that went silent) is found by the PING
// that goes unanswered.
func TestLostWhenRedisHangs(t *testing.T) {
	srv := startRedis(t)
	c := client(t, srv.Addr())
	r := &recorder{}
	run(t, c, r)
	r.waitLost(t, 1, "subscribed")

	if err := srv.Pause(); err != nil {
		t.Fatal(err)
	}
	r.waitLost(t, 2, "Redis hung")
	if err := srv.Resume(); err != nil {
		t.Fatal(err)
	}
	r.waitLost(t, 3, "subscribed again")
	publish(t, c, revoked)
	r.waitChanges(t, revoked)
}

// On a Cluster, a change published through the cluster client reaches
// subscribers on every node.
func TestChangesCrossAClusterNodes(t *testing.T) {
	cluster, err := testenv.StartRedisCluster(context.Background(), t.TempDir(), 3)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cluster.Stop() })
	var recorders []*recorder
	for _, addr := range cluster.Addrs() {
		r := &recorder{}
		run(t, client(t, addr), r) // one node each, not the cluster's choice
		r.waitLost(t, 1, "subscribed on "+addr)
		recorders = append(recorders, r)
	}
	publish(t, client(t, cluster.Addrs()...), deleted)
	for _, r := range recorders {
		r.waitChanges(t, deleted)
	}
}
