package ratelimit

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"log/slog"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/liveproctor/workspaces/pkg/clientaddr"
	"github.com/liveproctor/workspaces/pkg/envconfig"
	"github.com/liveproctor/workspaces/pkg/fault"
)

// Settings are the limits of a service, from its environment.
type Settings struct {
	// Default is every key pair's limit unless its workspace has its own:
	// RATE_LIMIT requests a second (0 turns all limits off) with bursts of
	// RATE_LIMIT_BURST.
	Default Limit
	// Failures: AUTH_FAILURE_LIMIT failed authentications with one app
	// key from one address, AUTH_FAILURE_LIMIT_PER_ADDRESS with any
	// credentials, in AUTH_FAILURE_WINDOW.
	Failures FailureLimits
	// Anonymous bounds the calls no credentials admit (LTI logins,
	// launches, the tool's keys and configurations).
	Anonymous AnonymousLimits
	// Proxies are the peers trusted to report the client's address in
	// X-Forwarded-For: TRUSTED_PROXIES, comma-separated CIDRs.
	Proxies clientaddr.Resolver
}

// ReadSettings reads the limits; trustedProxies is TRUSTED_PROXIES's
// default.
func ReadSettings(r *envconfig.Reader, trustedProxies string) Settings {
	s := Settings{
		Default: Limit{
			Rate:  r.Int("RATE_LIMIT", 100, 0, 1_000_000),
			Burst: r.Int("RATE_LIMIT_BURST", 200, 1, 10_000_000),
		},
		Failures: FailureLimits{
			PerKey:     r.Int("AUTH_FAILURE_LIMIT", 10, 0, 1_000_000),
			PerAddress: r.Int("AUTH_FAILURE_LIMIT_PER_ADDRESS", 100, 0, 1_000_000),
			Window:     r.Duration("AUTH_FAILURE_WINDOW", time.Minute),
		},
		Anonymous: AnonymousLimits{
			PerAddress: Limit{
				Rate:  r.Int("LTI_RATE_LIMIT_PER_ADDRESS", 20, 0, 1_000_000),
				Burst: r.Int("LTI_RATE_LIMIT_PER_ADDRESS_BURST", 600, 1, 10_000_000),
			},
			Total: Limit{
				Rate:  r.Int("LTI_RATE_LIMIT_TOTAL", 1000, 0, 1_000_000),
				Burst: r.Int("LTI_RATE_LIMIT_TOTAL_BURST", 10_000, 1, 10_000_000),
			},
		},
	}
	proxies, err := clientaddr.NewResolver(strings.Split(r.String("TRUSTED_PROXIES", trustedProxies), ","))
	if err != nil {
		r.Invalid("TRUSTED_PROXIES", "%v", err)
	}
	s.Proxies = proxies
	return s
}

// AnonymousLimits bound anonymous calls: PerAddress those of one client
// address (LTI_RATE_LIMIT_PER_ADDRESS, with bursts of
// LTI_RATE_LIMIT_PER_ADDRESS_BURST), Total those of every address on every
// replica (LTI_RATE_LIMIT_TOTAL, LTI_RATE_LIMIT_TOTAL_BURST). A rate of 0
// turns that limit off. The burst per address is large because a whole
// school may launch an exam at once from behind one NAT address.
type AnonymousLimits struct {
	PerAddress Limit
	Total      Limit
}

// ServiceTrustedProxies is the services' TRUSTED_PROXIES default: the
// loopback network, where the gateway and the other service run in a local
// stack. A cluster sets the network its gateway pods and services call from.
const ServiceTrustedProxies = "127.0.0.0/8,::1"

// Redis calls of the limits are bounded well below a request's deadline:
// past this, the replica counts on its own (see the package comment).
const redisTimeout = 250 * time.Millisecond

// localKeys bounds the keys each replica counts by itself.
const localKeys = 100_000

// Guard is what a service's gRPC port checks every call with: the failed
// authentications of the client's address, and the key pair's rate.
type Guard struct {
	settings Settings
	failures *Failures
	limiter  *Limiter
	// anonymous counts the anonymous calls.
	anonymous *Limiter
}

// NewGuard returns the guard over rdb (nil: this replica's counts only).
func NewGuard(rdb redis.UniversalClient, s Settings, logger *slog.Logger) *Guard {
	return &Guard{
		settings:  s,
		failures:  NewFailures(rdb, FailuresOptions{Limits: s.Failures, Timeout: redisTimeout, LocalKeys: localKeys, Logger: logger}),
		limiter:   NewLimiter(rdb, LimiterOptions{Policy: "keypair", Timeout: redisTimeout, LocalKeys: localKeys, Logger: logger}),
		anonymous: NewLimiter(rdb, LimiterOptions{Policy: "anonymous", Timeout: redisTimeout, LocalKeys: localKeys, Logger: logger}),
	}
}

// Proxies is the resolver of client addresses, for the port's interceptor.
func (g *Guard) Proxies() clientaddr.Resolver { return g.settings.Proxies }

// address is the counters' name for the call's client.
func address(ctx context.Context) string {
	a, _ := clientaddr.FromContext(ctx)
	return clientaddr.Key(a)
}

// CheckFailures refuses the call when its client address has failed to
// authenticate too often lately, with appKey (the key it presents; empty
// for a token) or at all. It runs before any credential check.
func (g *Guard) CheckFailures(ctx context.Context, appKey string) error {
	return failureAnswer(ctx, g.failures.Check(ctx, address(ctx), appKey))
}

// failureAnswer is a failure check's answer to the caller.
func failureAnswer(ctx context.Context, d Decision) error {
	if d.Allowed {
		return nil
	}
	SetHeaders(ctx, d)
	return Refusal(d, "too many failed authentications from your address; retry after %d s", d.RetryAfterSeconds())
}

// Failed counts a failed authentication of the call's client with appKey
// (empty for a token).
func (g *Guard) Failed(ctx context.Context, appKey string) {
	g.failures.Fail(ctx, address(ctx), appKey)
}

// LimitKeyPair counts a call of an authenticated key pair against its
// workspace's limit (own, when not Off) or the default, sending the
// rate-limit fields; it refuses the call over the limit.
func (g *Guard) LimitKeyPair(ctx context.Context, appKey string, own Limit) error {
	key, lim := g.keyPairLimit(appKey, own)
	if lim.Off() {
		return nil // RATE_LIMIT=0: limits are off, overrides too
	}
	return g.limit(ctx, key, lim)
}

// keyPairLimit is the limit a key pair's calls count against, own or the
// default (Off when RATE_LIMIT=0 turns every limit off), and its key.
func (g *Guard) keyPairLimit(appKey string, own Limit) (string, Limit) {
	lim := g.settings.Default
	if lim.Off() {
		return "", lim
	}
	if !own.Off() {
		lim = own
	}
	return "keypair:" + appKey + limitSuffix(lim), lim
}

// anonymousTag is the hash tag of the anonymous limits' keys: the address's
// and the total's are counted by one script, so on a Redis Cluster they must
// share a slot.
const anonymousTag = "{lti}"

// LimitAnonymous counts an anonymous call against its client address's
// limit, then, when that allows it, against the total. Over the address's
// limit it is refused as Throttled (HTTP 429): that client is sending too
// much. Over the total it is refused as Unavailable (HTTP 503): the service
// is busy, which is no fault of this client. Both carry the delay to wait.
func (g *Guard) LimitAnonymous(ctx context.Context) error {
	a := g.settings.Anonymous
	limits := make([]Keyed, 0, 2)
	perAddress := -1
	if !a.PerAddress.Off() {
		perAddress = len(limits)
		limits = append(limits, Keyed{Key: anonymousTag + ":addr:" + address(ctx) + limitSuffix(a.PerAddress), Limit: a.PerAddress})
	}
	if !a.Total.Off() {
		limits = append(limits, Keyed{Key: anonymousTag + ":total" + limitSuffix(a.Total), Limit: a.Total})
	}
	if len(limits) == 0 {
		return nil
	}
	i, d := g.anonymous.AllowEach(ctx, limits)
	switch {
	case i < 0:
		return nil
	case i == perAddress:
		return Refusal(d, "too many LTI requests from your address: %d a second, bursts of %d; retry after %d s",
			a.PerAddress.Rate, a.PerAddress.Burst, d.RetryAfterSeconds())
	}
	e := fault.New(fault.Unavailable, "LiveProctor is receiving too many LTI requests; retry after %d s", d.RetryAfterSeconds())
	e.RetryAfter = time.Duration(d.RetryAfterSeconds()) * time.Second
	return e
}

// limitSuffix ends a limit's key with the limit: GCRA keeps what was spent
// as time owed under the old rate, so a changed limit starts a bucket of its
// own, full, instead of paying that debt at the new rate.
func limitSuffix(l Limit) string {
	return ":" + strconv.Itoa(l.Rate) + ":" + strconv.Itoa(l.Burst)
}

// LimitToken counts a call presenting an SDK token against the default
// limit, per token.
func (g *Guard) LimitToken(ctx context.Context, token string) error {
	sum := sha256.Sum256([]byte(token))
	return g.limit(ctx, "token:"+hex.EncodeToString(sum[:12]), g.settings.Default)
}

func (g *Guard) limit(ctx context.Context, key string, lim Limit) error {
	return rateAnswer(ctx, g.limiter.Allow(ctx, key, lim), lim)
}

// rateAnswer is a rate limit's answer to the caller: the rate-limit fields,
// and a refusal when the call is over the limit.
func rateAnswer(ctx context.Context, d Decision, lim Limit) error {
	SetHeaders(ctx, d)
	if d.Allowed {
		return nil
	}
	return Refusal(d, "rate limit exceeded: %d requests a second, bursts of %d; retry after %d s", lim.Rate, lim.Burst, d.RetryAfterSeconds())
}
