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
	}
	proxies, err := clientaddr.NewResolver(strings.Split(r.String("TRUSTED_PROXIES", trustedProxies), ","))
	if err != nil {
		r.Invalid("TRUSTED_PROXIES", "%v", err)
	}
	s.Proxies = proxies
	return s
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
}

// NewGuard returns the guard over rdb (nil: this replica's counts only).
func NewGuard(rdb redis.UniversalClient, s Settings, logger *slog.Logger) *Guard {
	return &Guard{
		settings: s,
		failures: NewFailures(rdb, FailuresOptions{Limits: s.Failures, Timeout: redisTimeout, LocalKeys: localKeys, Logger: logger}),
		limiter:  NewLimiter(rdb, LimiterOptions{Policy: "keypair", Timeout: redisTimeout, LocalKeys: localKeys, Logger: logger}),
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
	// The limit is part of the key: GCRA keeps what was spent as time
	// owed under the old rate, so a raised limit starts a bucket of its
	// own, full, instead of paying that debt at the new rate.
	return "keypair:" + appKey + ":" + strconv.Itoa(lim.Rate) + ":" + strconv.Itoa(lim.Burst), lim
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
