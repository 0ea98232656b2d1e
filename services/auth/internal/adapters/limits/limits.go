// Package limits keeps the auth service's counters (app.Limits) in Redis,
// shared by every replica, with pkg/ratelimit: failed authentications per
// client address and the GCRA rates of key pairs and tokens. It decides
// nothing of its own; the policy is the application's (app/policy.go).
package limits

import (
	"context"

	"github.com/liveproctor/workspaces/pkg/ratelimit"
	"github.com/liveproctor/workspaces/services/auth/internal/app"
)

// Limits is app.Limits over a ratelimit.Guard.
type Limits struct {
	guard *ratelimit.Guard
}

var _ app.Limits = Limits{}

// New returns the limits counted by guard.
func New(guard *ratelimit.Guard) Limits { return Limits{guard: guard} }

func (l Limits) CheckFailures(ctx context.Context, appKey string) error {
	return l.guard.CheckFailures(ctx, appKey)
}

func (l Limits) Failed(ctx context.Context, appKey string) { l.guard.Failed(ctx, appKey) }

func (l Limits) LimitKeyPair(ctx context.Context, appKey string, own app.RateLimit) error {
	return l.guard.LimitKeyPair(ctx, appKey, Of(own))
}

func (l Limits) LimitToken(ctx context.Context, token string) error {
	return l.guard.LimitToken(ctx, token)
}

// Of is a workspace's own limit as pkg/ratelimit counts it (Off when it
// has none).
func Of(own app.RateLimit) ratelimit.Limit {
	return ratelimit.Limit{Rate: own.PerSecond, Burst: own.Burst}
}
