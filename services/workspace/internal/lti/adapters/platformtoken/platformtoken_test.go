package platformtoken_test

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/liveproctor/workspaces/pkg/fault"
	"github.com/liveproctor/workspaces/pkg/jose"
	"github.com/liveproctor/workspaces/pkg/outbound"
	"github.com/liveproctor/workspaces/pkg/testenv"
	"github.com/liveproctor/workspaces/services/workspace/internal/lti/adapters/ltistate"
	"github.com/liveproctor/workspaces/services/workspace/internal/lti/adapters/platformtoken"
	ltiapp "github.com/liveproctor/workspaces/services/workspace/internal/lti/app"
	ltidomain "github.com/liveproctor/workspaces/services/workspace/internal/lti/domain"
)

const (
	clientID = "tool-client-7"
	toolKID  = "tool-key-1"
)

// toolSigner signs as ToolKeys does, with the tool's one key.
type toolSigner struct{ key *rsa.PrivateKey }

func (s toolSigner) Sign(_ context.Context, claims any) (string, error) {
	return jose.Sign(claims, toolKID, s.key)
}

// platform is a token endpoint that checks every request as a platform
// does, the client assertion against the tool's JWKS, and answers what
// the test sets (answer), a new token by default.
type platform struct {
	t       *testing.T
	srv     *httptest.Server
	jwks    []byte
	fetches atomic.Int32
	// answer, when set, writes the answer instead of a new token.
	answer     atomic.Pointer[func(http.ResponseWriter)]
	expiresIn  int
	now        func() time.Time // the clock the assertion is checked on
	assertions sync.Map         // every assertion received, for the leak checks
	jtis       sync.Map
}

func newPlatform(t *testing.T, pub *rsa.PublicKey, expiresIn int) *platform {
	jwks, err := jose.MarshalKeySet([]jose.PublicKey{{KID: toolKID, Key: pub}})
	if err != nil {
		t.Fatal(err)
	}
	p := &platform{t: t, jwks: jwks, expiresIn: expiresIn, now: time.Now}
	p.srv = httptest.NewServer(http.HandlerFunc(p.token))
	t.Cleanup(p.srv.Close)
	return p
}

func (p *platform) url() string { return p.srv.URL + "/oauth2/token?realm=x" }

func (p *platform) token(w http.ResponseWriter, r *http.Request) {
	if err := p.check(r); err != nil {
		p.t.Errorf("token request refused: %v", err)
		w.WriteHeader(http.StatusBadRequest)
		_, _ = fmt.Fprintf(w, `{"error":"invalid_request"}`)
		return
	}
	n := p.fetches.Add(1)
	if answer := p.answer.Load(); answer != nil {
		(*answer)(w)
		return
	}
	w.Header().Set("Content-Type", "application/json;charset=UTF-8")
	_ = json.NewEncoder(w).Encode(map[string]any{
		"access_token": fmt.Sprintf("token-%d", n), "token_type": "bearer",
		"expires_in": p.expiresIn, "scope": r.PostForm.Get("scope"),
	})
}

// check verifies the request and its assertion: RS256 by the tool's key
// named by kid, iss = sub = the client id, aud = the token URL, at most
// five minutes, a jti never seen before.
func (p *platform) check(r *http.Request) error {
	if r.Method != http.MethodPost || r.Header.Get("Content-Type") != "application/x-www-form-urlencoded" {
		return fmt.Errorf("%s with %q", r.Method, r.Header.Get("Content-Type"))
	}
	if err := r.ParseForm(); err != nil {
		return err
	}
	f := r.PostForm
	if f.Get("grant_type") != "client_credentials" ||
		f.Get("client_assertion_type") != "urn:ietf:params:oauth:client-assertion-type:jwt-bearer" {
		return fmt.Errorf("form %v", f)
	}
	if asked := strings.Fields(f.Get("scope")); len(asked) == 0 || !slices.IsSorted(asked) || len(slices.Compact(asked)) != len(asked) ||
		strings.Join(asked, " ") != f.Get("scope") {
		return fmt.Errorf("scope %q, want a sorted set, space-separated", f.Get("scope"))
	}
	assertion := f.Get("client_assertion")
	p.assertions.Store(assertion, true)
	h, err := jose.ParseHeader(assertion)
	if err != nil {
		return err
	}
	keys, err := jose.ParseKeySet(p.jwks)
	if err != nil {
		return err
	}
	key, ok := keys.Key(h.KID)
	if !ok {
		return fmt.Errorf("kid %q not in the tool's JWKS", h.KID)
	}
	payload, err := jose.Verify(assertion, key)
	if err != nil {
		return err
	}
	c, err := jose.ParseClaims(payload)
	if err != nil {
		return err
	}
	if err := c.CheckTime(p.now(), 5*time.Second); err != nil {
		return err
	}
	var jti string
	_ = json.Unmarshal(c.Raw["jti"], &jti)
	tokenURL := "http://" + r.Host + r.URL.RequestURI()
	switch {
	case c.Issuer != clientID || c.Subject != clientID:
		return fmt.Errorf("iss %q, sub %q", c.Issuer, c.Subject)
	case len(c.Audience) != 1 || c.Audience[0] != tokenURL:
		return fmt.Errorf("aud %q, want %q", c.Audience, tokenURL)
	case c.IssuedAt.IsZero() || c.Expiry.Sub(c.IssuedAt) > 5*time.Minute:
		return fmt.Errorf("iat %v, exp %v", c.IssuedAt, c.Expiry)
	case jti == "":
		return errors.New("no jti")
	}
	if _, seen := p.jtis.LoadOrStore(jti, true); seen {
		return fmt.Errorf("jti %q used twice", jti)
	}
	return nil
}

// setAnswer makes the endpoint answer status with body and headers.
func (p *platform) setAnswer(status int, body string, header ...string) {
	answer := func(w http.ResponseWriter) {
		for i := 0; i+1 < len(header); i += 2 {
			w.Header().Set(header[i], header[i+1])
		}
		w.WriteHeader(status)
		_, _ = w.Write([]byte(body))
	}
	p.answer.Store(&answer)
}

var scopes = []string{
	"https://purl.imsglobal.org/spec/lti-ags/scope/score",
	"https://purl.imsglobal.org/spec/lti-ags/scope/lineitem",
	"https://purl.imsglobal.org/spec/lti-ags/scope/score",
}

type fixture struct {
	platform *platform
	reg      ltidomain.Registration
	signer   toolSigner
	endpoint *platformtoken.Client
}

func newFixture(t *testing.T, expiresIn int) fixture {
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	p := newPlatform(t, &key.PublicKey, expiresIn)
	u, _ := url.Parse(p.srv.URL)
	client := outbound.NewClient(outbound.Policy{InsecureHosts: []string{outbound.HostPort(u)}}, 5*time.Second)
	return fixture{
		platform: p, signer: toolSigner{key}, endpoint: platformtoken.New(client, nil),
		reg: ltidomain.Registration{ID: "reg-1", ClientID: clientID, AuthTokenURL: p.url()},
	}
}

// replica is one replica's tokens over store.
func (f fixture) replica(store ltiapp.PlatformTokenStore, lockLife time.Duration, now func() time.Time) *ltiapp.PlatformTokens {
	return ltiapp.NewPlatformTokens(f.endpoint, store, f.signer, lockLife, ltiapp.Settings{Now: now})
}

func startRedis(t *testing.T) *testenv.Server {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	srv, err := testenv.StartRedis(ctx, testenv.RedisOptions{Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = srv.Stop() })
	return srv
}

// redisStore is a replica's store: its own client of srv.
func redisStore(t *testing.T, srv *testenv.Server) *ltistate.RedisPlatformTokens {
	rdb := redis.NewUniversalClient(&redis.UniversalOptions{Addrs: []string{srv.Addr()}})
	t.Cleanup(func() { _ = rdb.Close() })
	return ltistate.NewRedisPlatformTokens(rdb)
}

// concurrentTokens calls Token n times at once on each replica and
// returns the access tokens answered.
func concurrentTokens(t *testing.T, reg ltidomain.Registration, n int, replicas ...*ltiapp.PlatformTokens) map[string]int {
	t.Helper()
	var mu sync.Mutex
	got := map[string]int{}
	var wg sync.WaitGroup
	for _, r := range replicas {
		for range n {
			wg.Go(func() {
				tok, err := r.Token(context.Background(), reg, scopes)
				if err != nil {
					t.Error(err)
					return
				}
				mu.Lock()
				got[tok.AccessToken]++
				mu.Unlock()
			})
		}
	}
	wg.Wait()
	return got
}

func TestOneFetchAcrossReplicas(t *testing.T) {
	srv := startRedis(t)
	f := newFixture(t, 3600)
	a, b := f.replica(redisStore(t, srv), 0, nil), f.replica(redisStore(t, srv), 0, nil)
	got := concurrentTokens(t, f.reg, 50, a, b)
	if n := f.platform.fetches.Load(); n != 1 || len(got) != 1 || got["token-1"] != 100 {
		t.Fatalf("%d fetches, tokens answered %v; want one fetch, token-1 for all 100", n, got)
	}
	// Another scope set is another token; the same set in another order
	// is the same.
	if tok, err := b.Token(context.Background(), f.reg, scopes[:1]); err != nil || tok.AccessToken != "token-2" {
		t.Fatalf("a token for another scope set: %q, %v; want token-2", tok.AccessToken, err)
	}
	if tok, err := b.Token(context.Background(), f.reg, []string{scopes[1], scopes[0]}); err != nil || tok.AccessToken != "token-1" {
		t.Fatalf("the first scope set reordered: %q, %v; want token-1", tok.AccessToken, err)
	}
}

func TestOneFetchInMemory(t *testing.T) {
	f := newFixture(t, 3600)
	r := f.replica(ltistate.NewMemoryPlatformTokens(100, nil), 0, nil)
	got := concurrentTokens(t, f.reg, 100, r)
	if n := f.platform.fetches.Load(); n != 1 || got["token-1"] != 100 {
		t.Fatalf("%d fetches, tokens answered %v; want one fetch, token-1 for all 100", n, got)
	}
}

func TestRenewedBeforeExpiry(t *testing.T) {
	srv := startRedis(t)
	f := newFixture(t, 3600)
	var mu sync.Mutex
	now := time.Now()
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	f.platform.now = clock
	a, b := f.replica(redisStore(t, srv), 0, clock), f.replica(redisStore(t, srv), 0, clock)
	ctx := context.Background()
	first, err := a.Token(ctx, f.reg, scopes)
	if err != nil {
		t.Fatal(err)
	}
	// 3600 s less a tenth: used until 3240 s, renewed from 2592 s.
	if life := first.UseUntil.Sub(now); life != 3240*time.Second {
		t.Fatalf("used for %v, want 54m (the 10%% margin)", life)
	}
	mu.Lock()
	now = first.RenewAt.Add(time.Second)
	mu.Unlock()
	// Due: still served, while one renewal runs (the calls on both
	// replicas that see it due join it).
	if tok, err := a.Token(ctx, f.reg, scopes); err != nil || tok.AccessToken != first.AccessToken {
		t.Fatalf("a token due for renewal: %q, %v; want it served", tok.AccessToken, err)
	}
	for _, r := range []*ltiapp.PlatformTokens{b, a, b} {
		if tok, err := r.Token(ctx, f.reg, scopes); err != nil || tok.AccessToken != first.AccessToken && tok.AccessToken != "token-2" {
			t.Fatalf("a token due for renewal: %q, %v; want it or its successor", tok.AccessToken, err)
		}
	}
	testenv.Eventually(t, 10*time.Second, func() error {
		tok, err := b.Token(ctx, f.reg, scopes)
		if err != nil || tok.AccessToken != "token-2" {
			return fmt.Errorf("token %q, %v", tok.AccessToken, err)
		}
		return nil
	}, "the renewed token")
	if n := f.platform.fetches.Load(); n != 2 {
		t.Fatalf("%d fetches, want 2 (one renewal)", n)
	}
	// A renewal the platform refuses leaves the token served, and the
	// lock held for its life: the platform is not asked at every call.
	second, err := a.Token(ctx, f.reg, scopes)
	if err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	now = second.RenewAt
	mu.Unlock()
	f.platform.setAnswer(http.StatusServiceUnavailable, "", "Retry-After", "30")
	// A call that sees the token due starts its renewal, unless this
	// replica's last renewal has yet to let go of the key, as a's may,
	// its token stored a moment before: calls go on until one has.
	testenv.Eventually(t, 10*time.Second, func() error {
		if n := f.platform.fetches.Load(); n >= 3 {
			return nil
		}
		if tok, err := a.Token(ctx, f.reg, scopes); err != nil || tok.AccessToken != "token-2" {
			t.Fatalf("a token due for renewal: %q, %v; want it served", tok.AccessToken, err)
		}
		return fmt.Errorf("%d fetches", f.platform.fetches.Load())
	}, "the refused renewal")
	if n := f.platform.fetches.Load(); n != 3 {
		t.Fatalf("%d fetches, want 3 (one refused renewal)", n)
	}
	rdb := redis.NewClient(&redis.Options{Addr: srv.Addr()})
	defer rdb.Close()
	locks, err := rdb.Keys(ctx, "{lti13:token:*}:lock").Result()
	if err != nil || len(locks) != 1 {
		t.Fatalf("locks after a refused renewal: %v, %v; want the one held", locks, err)
	}
	f.platform.answer.Store(nil)

	// Past its use, a token is never served, renewed or not.
	if err := rdb.Del(ctx, locks[0]).Err(); err != nil { // as if it expired
		t.Fatal(err)
	}
	mu.Lock()
	now = second.UseUntil
	mu.Unlock()
	// A call may still join the refused renewal's flight, whose platform
	// answer it then shares; the next fetches anew.
	testenv.Eventually(t, 10*time.Second, func() error {
		tok, err := a.Token(ctx, f.reg, scopes)
		if err != nil {
			return err
		}
		if tok.AccessToken == second.AccessToken || tok.AccessToken == "" {
			t.Fatalf("at its UseUntil: %q served; want a new token", tok.AccessToken)
		}
		return nil
	}, "a new token at the old one's UseUntil")
}

// deadHolder is a store on which another replica took the fetch lock and
// died, just before this replica's first Lock.
type deadHolder struct {
	ltiapp.PlatformTokenStore
	once sync.Once
	life time.Duration
}

func (d *deadHolder) Lock(ctx context.Context, key, owner string, ttl time.Duration) (bool, error) {
	d.once.Do(func() { _, _ = d.PlatformTokenStore.Lock(ctx, key, "replica-that-died", d.life) })
	return d.PlatformTokenStore.Lock(ctx, key, owner, ttl)
}

func TestHolderThatDiedDoesNotBlock(t *testing.T) {
	srv := startRedis(t)
	f := newFixture(t, 3600)
	const life = 300 * time.Millisecond
	r := f.replica(&deadHolder{PlatformTokenStore: redisStore(t, srv), life: life}, life, nil)
	got := concurrentTokens(t, f.reg, 10, r)
	if n := f.platform.fetches.Load(); n != 1 || got["token-1"] != 10 {
		t.Fatalf("%d fetches, tokens answered %v; want one fetch once the lock expired", n, got)
	}
}

func TestUnauthorizedInvalidatesOnce(t *testing.T) {
	srv := startRedis(t)
	f := newFixture(t, 3600)
	a, b := f.replica(redisStore(t, srv), 0, nil), f.replica(redisStore(t, srv), 0, nil)
	ctx := context.Background()
	refused, err := a.Token(ctx, f.reg, scopes)
	if err != nil {
		t.Fatal(err)
	}
	// Ten calls refused with it (401) on both replicas: each invalidates
	// it and asks again; one new token serves them all.
	var wg sync.WaitGroup
	for i := range 10 {
		r := []*ltiapp.PlatformTokens{a, b}[i%2]
		wg.Go(func() {
			if err := r.Invalidate(ctx, f.reg, scopes, refused); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	got := concurrentTokens(t, f.reg, 5, a, b)
	if n := f.platform.fetches.Load(); n != 2 || got["token-2"] != 10 {
		t.Fatalf("%d fetches, tokens answered %v; want one refetch, token-2 for all", n, got)
	}
	// A late 401 with the old token leaves the new one.
	if err := b.Invalidate(ctx, f.reg, scopes, refused); err != nil {
		t.Fatal(err)
	}
	if tok, err := a.Token(ctx, f.reg, scopes); err != nil || tok.AccessToken != "token-2" {
		t.Fatalf("after a stale Invalidate: %q, %v; want token-2 kept", tok.AccessToken, err)
	}
}

func TestErrors(t *testing.T) {
	date := time.Now().Add(90 * time.Second).UTC().Format(http.TimeFormat)
	for _, tc := range []struct {
		name       string
		status     int
		body       string
		header     []string
		kind       fault.Kind
		says       string
		retryAfter time.Duration // at least
	}{
		{"oauth error", 401, `{"error":"invalid_client","error_description":"unknown kid ` + strings.Repeat("x", 500) + `"}`,
			[]string{"Content-Type", "application/json"}, fault.BadGateway, "invalid_client: unknown kid", 0},
		{"scope refused", 400, `{"error":"invalid_scope"}`, nil, fault.BadGateway, "(HTTP 400): invalid_scope", 0},
		{"no oauth error", 403, `<html>no</html>`, nil, fault.BadGateway, "answered HTTP 403", 0},
		{"throttled", 429, ``, []string{"Retry-After", "7"}, fault.Unavailable, "HTTP 429", 7 * time.Second},
		{"down until a date", 503, ``, []string{"Retry-After", date}, fault.Unavailable, "HTTP 503", 60 * time.Second},
		// A wait is suggested even when the platform says none, so that no
		// gRPC client asks again at once.
		{"down, no word on when", 502, ``, nil, fault.Unavailable, "HTTP 502", time.Second},
		{"not bearer", 200, `{"access_token":"secret-token-1","token_type":"mac","expires_in":60}`,
			[]string{"Content-Type", "application/json"}, fault.BadGateway, `"mac", not Bearer`, 0},
		{"no token", 200, `{"token_type":"Bearer"}`, []string{"Content-Type", "application/json"}, fault.BadGateway, "no access_token", 0},
		{"not json", 200, `access_token=secret-token-1`, []string{"Content-Type", "text/plain"}, fault.BadGateway, "not JSON", 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t, 3600)
			f.platform.setAnswer(tc.status, tc.body, tc.header...)
			r := f.replica(ltistate.NewMemoryPlatformTokens(10, nil), 0, nil)
			_, err := r.Token(context.Background(), f.reg, scopes)
			var fe *fault.Error
			if !errors.As(err, &fe) || fe.Kind != tc.kind || !strings.Contains(fe.Message, tc.says) {
				t.Fatalf("error %v; want %v saying %q", err, tc.kind, tc.says)
			}
			if fe.RetryAfter < tc.retryAfter || fe.RetryAfter > time.Hour {
				t.Fatalf("Retry-After %v, want at least %v", fe.RetryAfter, tc.retryAfter)
			}
			if len(fe.Message) > 400 {
				t.Fatalf("message of %d bytes: the platform's description is not clipped", len(fe.Message))
			}
			f.platform.assertions.Range(func(a, _ any) bool {
				if strings.Contains(err.Error(), a.(string)) || strings.Contains(err.Error(), "secret-token-1") {
					t.Fatalf("the error %q carries a secret", err)
				}
				return true
			})
			// The failed fetch let the lock go: the next call asks again.
			_, _ = r.Token(context.Background(), f.reg, scopes)
			if n := f.platform.fetches.Load(); n != 2 {
				t.Fatalf("%d fetches after two failing calls, want 2", n)
			}
		})
	}
}

func TestRegistrationWithoutTokenURL(t *testing.T) {
	f := newFixture(t, 3600)
	r := f.replica(ltistate.NewMemoryPlatformTokens(10, nil), 0, nil)
	reg := f.reg
	reg.AuthTokenURL = ""
	if _, err := r.Token(context.Background(), reg, scopes); fault.KindOf(err) != fault.FailedPrecondition {
		t.Fatalf("no authTokenUrl: %v, want FailedPrecondition", err)
	}
	reg.AuthTokenURL = "https://127.0.0.1/token"
	if _, err := r.Token(context.Background(), reg, scopes); fault.KindOf(err) != fault.FailedPrecondition || f.platform.fetches.Load() != 0 {
		t.Fatalf("a loopback authTokenUrl: %v, want FailedPrecondition and no call", err)
	}
}
