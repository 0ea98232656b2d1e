package platformkeys_test

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/liveproctor/workspaces/pkg/jose"
	"github.com/liveproctor/workspaces/pkg/outbound"
	"github.com/liveproctor/workspaces/services/workspace/internal/lti/adapters/platformkeys"
)

// platform serves a JWKS over real HTTP and counts its fetches.
type platform struct {
	srv     *httptest.Server
	fetches atomic.Int32
	mu      sync.Mutex
	body    []byte
	status  int
	cache   string
}

func newPlatform(t *testing.T, keys ...jose.PublicKey) *platform {
	p := &platform{status: http.StatusOK}
	p.serve(t, keys...)
	p.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		p.fetches.Add(1)
		p.mu.Lock()
		defer p.mu.Unlock()
		if p.cache != "" {
			w.Header().Set("Cache-Control", p.cache)
		}
		w.WriteHeader(p.status)
		_, _ = w.Write(p.body)
	}))
	t.Cleanup(p.srv.Close)
	return p
}

func (p *platform) serve(t *testing.T, keys ...jose.PublicKey) {
	t.Helper()
	body, err := jose.MarshalKeySet(keys)
	if err != nil {
		t.Fatal(err)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.body, p.status = body, http.StatusOK
}

func (p *platform) fail() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.status = http.StatusInternalServerError
}

func key(t *testing.T, kid string) jose.PublicKey {
	t.Helper()
	k, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	return jose.PublicKey{KID: kid, Key: &k.PublicKey}
}

type fixture struct {
	cache *platformkeys.Cache
	now   time.Time
	mu    sync.Mutex
}

func newFixture(t *testing.T, p *platform) *fixture {
	u, _ := url.Parse(p.srv.URL)
	f := &fixture{now: time.Date(2026, 11, 26, 8, 0, 0, 0, time.UTC)}
	client := outbound.NewClient(outbound.Policy{InsecureHosts: []string{u.Host}}, 2*time.Second)
	f.cache = platformkeys.New(client, func() time.Time { f.mu.Lock(); defer f.mu.Unlock(); return f.now }, 0)
	return f
}

func (f *fixture) advance(d time.Duration) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.now = f.now.Add(d)
}

func wantFetches(t *testing.T, p *platform, n int32, when string) {
	t.Helper()
	if got := p.fetches.Load(); got != n {
		t.Fatalf("%s: %d fetches of the JWKS, want %d", when, got, n)
	}
}

// A hundred launches at once, on a cold cache, cost one fetch.
func TestOneFetchForManyLaunches(t *testing.T) {
	k1 := key(t, "k1")
	p := newPlatform(t, k1)
	f := newFixture(t, p)
	var wg sync.WaitGroup
	errs := make(chan error, 100)
	for range 100 {
		wg.Go(func() {
			got, err := f.cache.Key(context.Background(), "reg-1", p.srv.URL, "k1")
			if err == nil && !got.Equal(k1.Key) {
				err = errors.New("another key")
			}
			errs <- err
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	wantFetches(t, p, 1, "100 launches")
}

// The set is kept as the platform's max-age says, within the bounds.
func TestKeptAsCacheControlSays(t *testing.T) {
	p := newPlatform(t, key(t, "k1"))
	p.cache = "public, max-age=600"
	f := newFixture(t, p)
	ctx := context.Background()
	for _, step := range []struct {
		after   time.Duration
		fetches int32
	}{{0, 1}, {9 * time.Minute, 1}, {time.Minute, 2}, {9 * time.Minute, 2}, {time.Minute, 3}} {
		f.advance(step.after)
		if _, err := f.cache.Key(ctx, "reg-1", p.srv.URL, "k1"); err != nil {
			t.Fatal(err)
		}
		wantFetches(t, p, step.fetches, fmt.Sprintf("%s later", step.after))
	}
	for cc, want := range map[string]time.Duration{
		"": time.Hour, "max-age=60": 5 * time.Minute, "max-age=7200": 2 * time.Hour,
		"max-age=9999999": 24 * time.Hour, "no-store": 5 * time.Minute, "no-cache, max-age=3600": 5 * time.Minute,
		"max-age=abc": time.Hour, `public, MAX-AGE="900"`: 15 * time.Minute,
	} {
		if got := platformkeys.Freshness(cc); got != want {
			t.Errorf("Freshness(%q) = %s, want %s", cc, got, want)
		}
	}
}

// A rotated kid refetches once, and the launch succeeds; within the
// interval of the last fetch it does not, and the launch is refused.
func TestRotatedKeyRefetchesOnce(t *testing.T) {
	p := newPlatform(t, key(t, "k1"))
	f := newFixture(t, p)
	ctx := context.Background()
	if _, err := f.cache.Key(ctx, "reg-1", p.srv.URL, "k1"); err != nil {
		t.Fatal(err)
	}
	k2 := key(t, "k2")
	p.serve(t, k2)
	f.advance(10 * time.Second)
	if _, err := f.cache.Key(ctx, "reg-1", p.srv.URL, "k2"); !errors.Is(err, platformkeys.ErrKeyNotFound) {
		t.Fatalf("k2 10 s after the fetch: %v, want ErrKeyNotFound", err)
	}
	wantFetches(t, p, 1, "an unknown kid within the interval")
	f.advance(platformkeys.RefetchInterval)
	got, err := f.cache.Key(ctx, "reg-1", p.srv.URL, "k2")
	if err != nil || !got.Equal(k2.Key) {
		t.Fatalf("k2 after the interval: %v", err)
	}
	wantFetches(t, p, 2, "the rotated kid")
	if _, err := f.cache.Key(ctx, "reg-1", p.srv.URL, "k2"); err != nil {
		t.Fatal(err)
	}
	wantFetches(t, p, 2, "the rotated kid again")
}

// Made-up kids cost the platform at most one fetch per interval.
func TestUnknownKidsAreBounded(t *testing.T) {
	p := newPlatform(t, key(t, "k1"))
	f := newFixture(t, p)
	ctx := context.Background()
	if _, err := f.cache.Key(ctx, "reg-1", p.srv.URL, "k1"); err != nil {
		t.Fatal(err)
	}
	f.advance(platformkeys.RefetchInterval)
	for round := range 3 {
		for i := range 50 {
			kid := fmt.Sprintf("guess-%d-%d", round, i)
			if _, err := f.cache.Key(ctx, "reg-1", p.srv.URL, kid); !errors.Is(err, platformkeys.ErrKeyNotFound) {
				t.Fatalf("%s: %v", kid, err)
			}
			f.advance(100 * time.Millisecond) // 50 guesses in 5 s
		}
		wantFetches(t, p, int32(2+round), fmt.Sprintf("round %d of 50 guesses", round))
		f.advance(platformkeys.RefetchInterval)
	}
}

// With a warm cache, launches go on while the platform's JWKS URL fails;
// the failing URL is tried at most once per interval.
func TestHeldKeysServeWhileThePlatformFails(t *testing.T) {
	p := newPlatform(t, key(t, "k1"))
	f := newFixture(t, p)
	ctx := context.Background()
	if _, err := f.cache.Key(ctx, "reg-1", p.srv.URL, "k1"); err != nil {
		t.Fatal(err)
	}
	p.fail()
	f.advance(2 * time.Hour) // past the default freshness
	for i := range 20 {
		if _, err := f.cache.Key(ctx, "reg-1", p.srv.URL, "k1"); err != nil {
			t.Fatalf("launch %d while the JWKS URL answers 500: %v", i, err)
		}
		f.advance(time.Second)
	}
	wantFetches(t, p, 2, "20 s of launches against a failing URL")
}

// Without held keys, a failing URL refuses the launch as unavailable, and
// is tried again only after the interval.
func TestColdCacheAndFailingPlatform(t *testing.T) {
	p := newPlatform(t, key(t, "k1"))
	p.fail()
	f := newFixture(t, p)
	ctx := context.Background()
	for range 3 {
		if _, err := f.cache.Key(ctx, "reg-1", p.srv.URL, "k1"); !errors.Is(err, platformkeys.ErrUnavailable) {
			t.Fatalf("err = %v, want ErrUnavailable", err)
		}
	}
	wantFetches(t, p, 1, "three launches at once against a failing URL")
	p.serve(t, key(t, "k1"))
	f.advance(platformkeys.RefetchInterval)
	if _, err := f.cache.Key(ctx, "reg-1", p.srv.URL, "k1"); err != nil {
		t.Fatal(err)
	}
	wantFetches(t, p, 2, "after the interval")
}

// Registrations are kept apart, and a changed JWKS URL is fetched anew.
func TestEntriesPerRegistrationAndURL(t *testing.T) {
	p := newPlatform(t, key(t, "k1"))
	f := newFixture(t, p)
	ctx := context.Background()
	for _, c := range []struct{ reg, path string }{{"reg-1", "/a"}, {"reg-2", "/a"}, {"reg-1", "/a"}, {"reg-1", "/b"}} {
		if _, err := f.cache.Key(ctx, c.reg, p.srv.URL+c.path, "k1"); err != nil {
			t.Fatal(err)
		}
	}
	wantFetches(t, p, 3, "reg-1, reg-2, reg-1 again, reg-1 with a new URL")
}

// A shorter refetch interval (the black-box tests') is the one kept.
func TestShorterRefetchInterval(t *testing.T) {
	p := newPlatform(t, key(t, "k1"))
	f := newFixture(t, p)
	u, _ := url.Parse(p.srv.URL)
	client := outbound.NewClient(outbound.Policy{InsecureHosts: []string{u.Host}}, 2*time.Second)
	f.cache = platformkeys.New(client, func() time.Time { f.mu.Lock(); defer f.mu.Unlock(); return f.now }, time.Second)
	ctx := context.Background()
	if _, err := f.cache.Key(ctx, "reg-1", p.srv.URL, "k1"); err != nil {
		t.Fatal(err)
	}
	k2 := key(t, "k2")
	p.serve(t, k2)
	f.advance(500 * time.Millisecond)
	if _, err := f.cache.Key(ctx, "reg-1", p.srv.URL, "k2"); !errors.Is(err, platformkeys.ErrKeyNotFound) {
		t.Fatalf("k2 within the interval: %v", err)
	}
	f.advance(500 * time.Millisecond)
	if _, err := f.cache.Key(ctx, "reg-1", p.srv.URL, "k2"); err != nil {
		t.Fatalf("k2 after a second: %v", err)
	}
	wantFetches(t, p, 2, "a rotated kid after the shorter interval")
}
