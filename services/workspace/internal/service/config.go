// Package service builds the workspace service from its configuration. It is
// the only package that imports the adapters.
package service

import (
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/liveproctor/workspaces/pkg/envconfig"
	"github.com/liveproctor/workspaces/pkg/grpcmw"
	"github.com/liveproctor/workspaces/pkg/outbound"
	"github.com/liveproctor/workspaces/pkg/ratelimit"
	"github.com/liveproctor/workspaces/pkg/redisconn"
	"github.com/liveproctor/workspaces/pkg/telemetry"
	"github.com/liveproctor/workspaces/pkg/webhook"
	"github.com/liveproctor/workspaces/services/workspace/internal/adapters/secretbox"
	"github.com/liveproctor/workspaces/services/workspace/internal/app"
	ltidomain "github.com/liveproctor/workspaces/services/workspace/internal/lti/domain"
)

// Config is every setting of the workspace service; see the README's table.
type Config struct {
	GRPCAddr      string // WORKSPACE_GRPC_ADDR
	MetricsAddr   string // METRICS_ADDR: Prometheus /metrics; empty: off
	MongoURI      string // MONGODB_URI
	MongoDatabase string // MONGODB_DATABASE

	EncryptionKey []byte // KEY_ENCRYPTION_KEY: 32 bytes, Base64
	HMACKey       []byte // KEY_HMAC_KEY: 32 bytes, Base64

	Bootstrap  app.BootstrapConfig // BOOTSTRAP_*
	LTIBaseURL string              // PUBLIC_BASE_URL
	// LTIURLs is the rule of the platform URLs LTI 1.3 registrations
	// store: https on public hosts, but for the host:port entries of
	// LTI_ALLOW_INSECURE_HOSTS (tests' platforms on loopback).
	LTIURLs outbound.Policy
	// LTIJWKSRefetch is how often a platform's key set may be refetched
	// for an unknown kid (LTI_JWKS_REFETCH_INTERVAL): the contract's 30 s;
	// only the black-box tests shorten it, to see a rotation without
	// waiting 30 s.
	LTIJWKSRefetch time.Duration
	// LTIToolKeys is the schedule of the tool's LTI 1.3 signing keys:
	// LTI_TOOL_KEY_ROTATION (how long a key signs), LTI_TOOL_KEY_LEAD (how
	// long its successor is published before it signs) and
	// LTI_TOOL_KEY_OVERLAP (how long a replaced key stays published).
	LTIToolKeys ltidomain.ToolKeyRotation
	// LTI13PendingLoginsMax is the most LTI 1.3 logins started and not
	// yet launched (nor expired) held at once (LTI13_PENDING_LOGINS_MAX):
	// across every replica in Redis, per replica without it. A login
	// initiation is anonymous; past the cap new ones are refused
	// (Unavailable) rather than let a flood fill Redis.
	LTI13PendingLoginsMax int
	// LTIToolKeyCheck is how often each replica brings those keys up to
	// date (LTI_TOOL_KEY_CHECK_INTERVAL). Only the black-box tests shorten
	// these four, to see a rotation in seconds.
	LTIToolKeyCheck time.Duration
	// LTILaunchGrace is how long a launch's record is kept after its
	// session's 8 hours, for late grading (LTI_LAUNCH_GRACE, 30 days).
	LTILaunchGrace time.Duration
	// LTIScores tune the delivery of LTI scores to the platforms'
	// gradebooks.
	LTIScores LTIScoreSettings

	// AuthServiceAddr is told about deleted workspaces (AUTH_SERVICE_ADDR);
	// empty: nobody is told, and the auth service's own status check is
	// what keeps a deleted workspace's tokens out.
	AuthServiceAddr string
	// GRPCServer bounds the age of the connections clients make to this
	// service (GRPC_MAX_CONNECTION_AGE, GRPC_MAX_CONNECTION_AGE_GRACE);
	// GRPCClient is how the auth service's name is resolved
	// (GRPC_DNS_MIN_RESOLUTION_INTERVAL).
	GRPCServer grpcmw.ServerSettings
	GRPCClient grpcmw.ClientSettings
	// ServiceAppKey/Secret is the key pair of the root workspace this
	// service calls the auth service with: SERVICE_APP_KEY and
	// SERVICE_APP_SECRET, or else the bootstrap pair. Required with
	// AuthServiceAddr.
	ServiceAppKey    string
	ServiceAppSecret string

	CallTimeout         time.Duration // WORKSPACE_CALL_TIMEOUT: bound of one gRPC call
	StoreTimeout        time.Duration // MONGODB_TIMEOUT: server selection, connect and health probe
	StartTimeout        time.Duration // START_TIMEOUT: how long start-up waits for the store
	ShutdownTimeout     time.Duration // SHUTDOWN_TIMEOUT
	CredentialCacheTTL  time.Duration // CREDENTIAL_CACHE_TTL
	CredentialCacheSize int           // CREDENTIAL_CACHE_SIZE

	// Redis holds the rate limits and the LTI launch nonces every replica
	// shares: REDIS_ADDR and the other REDIS_* settings (pkg/redisconn).
	// Without REDIS_ADDR each replica counts, and remembers nonces, on its
	// own.
	Redis redis.UniversalOptions
	// Limits: RATE_LIMIT, RATE_LIMIT_BURST, AUTH_FAILURE_*, TRUSTED_PROXIES.
	Limits ratelimit.Settings

	// Events tune the audit trail: EVENTS_SETTLE, EVENTS_RELAY_INTERVAL.
	Events app.EventSettings
	// EventRetention is how long the store keeps events (EVENT_RETENTION).
	EventRetention time.Duration

	// WebhookURLs is the rule of webhooks' URLs, when stored and when
	// delivered to: https on public hosts, but for the host:port entries
	// of WEBHOOK_ALLOW_INSECURE_HOSTS (tests' receivers on loopback).
	WebhookURLs outbound.Policy
	// Webhooks tune their delivery (docs/webhooks.md).
	Webhooks WebhookSettings

	Telemetry telemetry.Settings // LOG_LEVEL, PPROF_ADDR, OTEL_*
}

// WebhookSettings tune the delivery of webhooks.
type WebhookSettings struct {
	// Workers bounds the attempts a replica makes at once
	// (WEBHOOK_WORKERS).
	Workers int
	// Lease is how long a replica holds a delivery it claimed
	// (WEBHOOK_LEASE): an attempt is cut at half of it (at most
	// webhook.Timeout), and a replica that dies mid-attempt leaves the
	// delivery to another after it.
	Lease time.Duration
	// IdleRecheck is how long an endpoint with nothing to deliver waits
	// before it looks again when no publish wakes it
	// (WEBHOOK_IDLE_RECHECK): the bound on a lost wake.
	IdleRecheck time.Duration
	// AttemptRetention is how long attempts are kept
	// (WEBHOOK_ATTEMPT_RETENTION).
	AttemptRetention time.Duration
	// RetrySchedule is the wait after each failed attempt
	// (WEBHOOK_RETRY_SCHEDULE, the specification's by default).
	RetrySchedule webhook.Schedule
}

// LTIScoreSettings tune the delivery of LTI scores and how long they are
// kept.
type LTIScoreSettings struct {
	// Workers bounds the queues a replica delivers at once
	// (LTI_SCORE_WORKERS).
	Workers int
	// Lease is how long a replica holds a user's queue of scores for one
	// attempt (LTI_SCORE_LEASE): a replica that dies mid-attempt leaves
	// the queue to another after it.
	Lease time.Duration
	// Poll is how often a replica looks for due queues while it finds
	// none (LTI_SCORE_POLL).
	Poll time.Duration
	// GiveUpAfter is how long after its making a score still undelivered
	// fails (LTI_SCORE_GIVE_UP_AFTER).
	GiveUpAfter time.Duration
	// Retention is how long scores, idle queues and the line items found
	// for resource links are kept (LTI_SCORE_RETENTION): their TTL
	// indexes'.
	Retention time.Duration
	// RetrySchedule is the wait after each attempt of a score the
	// platform refused for now (LTI_SCORE_RETRY_SCHEDULE, the webhooks'
	// default schedule).
	RetrySchedule webhook.Schedule
}

// TelemetrySettings is what lifecycle.Main sets the process up with.
func (c Config) TelemetrySettings() telemetry.Settings { return c.Telemetry }

// ConfigFromEnv reads the configuration, reporting every bad variable by name.
func ConfigFromEnv(r *envconfig.Reader) (Config, error) {
	cfg := Config{
		GRPCAddr:      r.Addr("WORKSPACE_GRPC_ADDR", ":9090"),
		MetricsAddr:   r.OptionalAddr("METRICS_ADDR", ":9464"),
		MongoURI:      r.Required("MONGODB_URI"),
		MongoDatabase: r.String("MONGODB_DATABASE", "workspaces"),
		EncryptionKey: r.Key("KEY_ENCRYPTION_KEY", secretbox.KeySize),
		HMACKey:       r.Key("KEY_HMAC_KEY", secretbox.KeySize),
		Bootstrap: app.BootstrapConfig{
			WorkspaceID: r.String("BOOTSTRAP_WORKSPACE_ID", "root"),
			Name:        r.String("BOOTSTRAP_WORKSPACE_NAME", "Root workspace"),
			Products:    r.List("BOOTSTRAP_PRODUCTS"),
		},
		LTIBaseURL:          r.String("PUBLIC_BASE_URL", "http://127.0.0.1:8080"),
		AuthServiceAddr:     grpcmw.ReadTarget(r, "AUTH_SERVICE_ADDR", ""),
		GRPCServer:          grpcmw.ReadServerSettings(r),
		GRPCClient:          grpcmw.ReadClientSettings(r),
		CallTimeout:         r.Duration("WORKSPACE_CALL_TIMEOUT", 5*time.Second),
		StoreTimeout:        r.Duration("MONGODB_TIMEOUT", 500*time.Millisecond),
		StartTimeout:        r.Duration("START_TIMEOUT", 60*time.Second),
		ShutdownTimeout:     r.Duration("SHUTDOWN_TIMEOUT", 15*time.Second),
		CredentialCacheTTL:  r.Duration("CREDENTIAL_CACHE_TTL", 10*time.Second),
		CredentialCacheSize: r.Int("CREDENTIAL_CACHE_SIZE", 10000, 1, 10_000_000),
		Redis:               redisconn.ReadOptions(r, false),
		Limits:              ratelimit.ReadSettings(r, ratelimit.ServiceTrustedProxies),
		Events: app.EventSettings{
			Settle:        r.Duration("EVENTS_SETTLE", 2*time.Second),
			RelayInterval: r.Duration("EVENTS_RELAY_INTERVAL", 5*time.Second),
		},
		EventRetention: r.Duration("EVENT_RETENTION", 90*24*time.Hour),
		Telemetry:      telemetry.ReadSettings(r),
	}
	var err error
	if cfg.LTIURLs, err = outbound.ParsePolicy(r.String("LTI_ALLOW_INSECURE_HOSTS", "")); err != nil {
		r.Invalid("LTI_ALLOW_INSECURE_HOSTS", "must be comma-separated host:port entries: %v", err)
	}
	if cfg.LTIJWKSRefetch = r.Duration("LTI_JWKS_REFETCH_INTERVAL", 30*time.Second); cfg.LTIJWKSRefetch < 100*time.Millisecond || cfg.LTIJWKSRefetch > 30*time.Second {
		r.Invalid("LTI_JWKS_REFETCH_INTERVAL", "must be between 100ms and 30s (30s but in tests)")
	}
	// 50,000 logins pending in ten minutes (ltiapp.LTI13StateTTL) is over 80 a
	// second, none of them launched: more than any exam's start needs.
	cfg.LTI13PendingLoginsMax = r.Int("LTI13_PENDING_LOGINS_MAX", 50_000, 1, 10_000_000)
	cfg.LTIToolKeys, cfg.LTIToolKeyCheck = readToolKeySchedule(r)
	cfg.LTILaunchGrace = r.Duration("LTI_LAUNCH_GRACE", 720*time.Hour)
	cfg.LTIScores = readLTIScoreSettings(r)
	cfg.WebhookURLs, cfg.Webhooks = readWebhookSettings(r)
	cfg.Bootstrap.AppKey, cfg.Bootstrap.AppSecret, _ = r.Pair("BOOTSTRAP_APP_KEY", "BOOTSTRAP_APP_SECRET")
	var given bool
	cfg.ServiceAppKey, cfg.ServiceAppSecret, given = r.Pair("SERVICE_APP_KEY", "SERVICE_APP_SECRET")
	if !given {
		cfg.ServiceAppKey, cfg.ServiceAppSecret = cfg.Bootstrap.AppKey, cfg.Bootstrap.AppSecret
	}
	if cfg.AuthServiceAddr != "" && cfg.ServiceAppKey == "" {
		r.Invalid("SERVICE_APP_KEY", "is required with AUTH_SERVICE_ADDR (with SERVICE_APP_SECRET), unless BOOTSTRAP_APP_KEY and BOOTSTRAP_APP_SECRET are set")
	}
	if cfg.Events.Settle < 20*time.Millisecond {
		r.Invalid("EVENTS_SETTLE", "must be at least 20ms: half of it bounds each event's publish")
	}
	if cfg.EncryptionKey == nil {
		r.Required("KEY_ENCRYPTION_KEY")
	}
	if cfg.HMACKey == nil {
		r.Required("KEY_HMAC_KEY")
	}
	return cfg, r.Err()
}

// readToolKeySchedule reads the LTI 1.3 tool keys' schedule. The bounds
// are the domain's (ToolKeyRotation.Check) and what the tests need; what
// production needs, a lead longer than platforms cache a key set (a day at
// most), is the defaults' and the README's advice.
func readToolKeySchedule(r *envconfig.Reader) (ltidomain.ToolKeyRotation, time.Duration) {
	def := ltidomain.DefaultToolKeyRotation
	rotation := ltidomain.ToolKeyRotation{
		Every:   r.Duration("LTI_TOOL_KEY_ROTATION", def.Every),
		Lead:    r.Duration("LTI_TOOL_KEY_LEAD", def.Lead),
		Overlap: r.Duration("LTI_TOOL_KEY_OVERLAP", def.Overlap),
	}
	for _, s := range []struct {
		name string
		d    time.Duration
	}{{"LTI_TOOL_KEY_ROTATION", rotation.Every}, {"LTI_TOOL_KEY_LEAD", rotation.Lead}, {"LTI_TOOL_KEY_OVERLAP", rotation.Overlap}} {
		if s.d < time.Second {
			r.Invalid(s.name, "must be at least 1s")
		}
	}
	if err := rotation.Check(); err != nil {
		r.Invalid("LTI_TOOL_KEY_ROTATION", "with LTI_TOOL_KEY_LEAD and LTI_TOOL_KEY_OVERLAP: %v", err)
	}
	// Checked less often than the lead, a successor would be made late and
	// each key would sign up to an interval past its rotation.
	check := r.Duration("LTI_TOOL_KEY_CHECK_INTERVAL", time.Hour)
	if check < 100*time.Millisecond || check > rotation.Lead {
		r.Invalid("LTI_TOOL_KEY_CHECK_INTERVAL", "must be between 100ms and LTI_TOOL_KEY_LEAD (%s)", rotation.Lead)
	}
	return rotation, check
}

// readWebhookSettings reads the rule of webhooks' URLs and the tuning of
// their delivery.
func readWebhookSettings(r *envconfig.Reader) (outbound.Policy, WebhookSettings) {
	policy, err := outbound.ParsePolicy(r.String("WEBHOOK_ALLOW_INSECURE_HOSTS", ""))
	if err != nil {
		r.Invalid("WEBHOOK_ALLOW_INSECURE_HOSTS", "must be comma-separated host:port entries: %v", err)
	}
	s := WebhookSettings{
		Workers:          r.Int("WEBHOOK_WORKERS", 8, 1, 256),
		Lease:            r.Duration("WEBHOOK_LEASE", 30*time.Second),
		IdleRecheck:      r.Duration("WEBHOOK_IDLE_RECHECK", time.Minute),
		AttemptRetention: r.Duration("WEBHOOK_ATTEMPT_RETENTION", 30*24*time.Hour),
		RetrySchedule:    readRetrySchedule(r, "WEBHOOK_RETRY_SCHEDULE"),
	}
	if s.Lease < 2*time.Second || s.Lease > 10*time.Minute {
		r.Invalid("WEBHOOK_LEASE", "must be between 2s and 10m (30s: an attempt may take up to 15s)")
	}
	if s.IdleRecheck < 100*time.Millisecond || s.IdleRecheck > time.Hour {
		r.Invalid("WEBHOOK_IDLE_RECHECK", "must be between 100ms and 1h")
	}
	if s.AttemptRetention < time.Hour {
		r.Invalid("WEBHOOK_ATTEMPT_RETENTION", "must be at least 1h")
	}
	return policy, s
}

// scoreRetentionMargin is how much longer than the give-up window scores
// are kept at least: past the window a score fails at its queue's next
// turn, which comes up to a retry's longest wait later (a Retry-After, at
// most webhook.MaxRetryAfter, or the schedule's longest step, with its
// 10% jitter) and a lease; removed sooner, it would vanish instead,
// neither failed nor in the audit trail.
const scoreRetentionMargin = 12 * time.Hour

// readLTIScoreSettings reads the tuning of the LTI scores' delivery and
// their retention.
func readLTIScoreSettings(r *envconfig.Reader) LTIScoreSettings {
	s := LTIScoreSettings{
		Workers:       r.Int("LTI_SCORE_WORKERS", 4, 1, 64),
		Lease:         r.Duration("LTI_SCORE_LEASE", time.Minute),
		Poll:          r.Duration("LTI_SCORE_POLL", time.Second),
		GiveUpAfter:   r.Duration("LTI_SCORE_GIVE_UP_AFTER", 7*24*time.Hour),
		Retention:     r.Duration("LTI_SCORE_RETENTION", 30*24*time.Hour),
		RetrySchedule: readRetrySchedule(r, "LTI_SCORE_RETRY_SCHEDULE"),
	}
	if s.Lease < 2*time.Second || s.Lease > 10*time.Minute {
		// An attempt may take a token, a line item's finding and making,
		// and the score: up to 40 s against a slow platform.
		r.Invalid("LTI_SCORE_LEASE", "must be between 2s and 10m (1m: an attempt may take up to 40s)")
	}
	if s.Poll < 100*time.Millisecond || s.Poll > time.Minute {
		r.Invalid("LTI_SCORE_POLL", "must be between 100ms and 1m")
	}
	if s.GiveUpAfter <= s.Lease {
		r.Invalid("LTI_SCORE_GIVE_UP_AFTER", "must be longer than LTI_SCORE_LEASE (%s)", s.Lease)
	}
	if s.Retention < s.GiveUpAfter+scoreRetentionMargin {
		r.Invalid("LTI_SCORE_RETENTION", "must be at least LTI_SCORE_GIVE_UP_AFTER (%s) plus %s, so that a score still pending then is failed, and its failure kept, before it is removed",
			s.GiveUpAfter, scoreRetentionMargin)
	}
	return s
}

// readRetrySchedule reads a retry schedule (WEBHOOK_RETRY_SCHEDULE,
// LTI_SCORE_RETRY_SCHEDULE), a comma-separated list of waits
// ("5s,5m,30m"); unset, the Standard Webhooks specification's schedule.
func readRetrySchedule(r *envconfig.Reader, name string) webhook.Schedule {
	steps := r.List(name)
	if steps == nil {
		return webhook.DefaultSchedule
	}
	s := make(webhook.Schedule, len(steps))
	for i, step := range steps {
		d, err := time.ParseDuration(step)
		if err != nil {
			r.Invalid(name, "must be comma-separated durations such as 5s,5m,30m, got %q", step)
			return webhook.DefaultSchedule
		}
		s[i] = d
	}
	if err := s.Check(); err != nil {
		r.Invalid(name, "%v", err)
		return webhook.DefaultSchedule
	}
	return s
}
