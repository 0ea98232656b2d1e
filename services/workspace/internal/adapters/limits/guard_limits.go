// Package limits makes pkg/ratelimit's Guard (Redis, or each replica's own
// counts) the limits the workspace application admits calls by.
package limits

import (
	"context"

	"github.com/liveproctor/workspaces/pkg/ratelimit"
	"github.com/liveproctor/workspaces/services/workspace/internal/app"
	"github.com/liveproctor/workspaces/services/workspace/internal/domain"
)

// Guard is app.Limits over a ratelimit.Guard, which also sends the calls'
// rate-limit headers.
type Guard struct{ guard *ratelimit.Guard }

var _ app.Limits = Guard{}

// New returns the application's limits over guard.
func New(guard *ratelimit.Guard) Guard { return Guard{guard: guard} }

func (g Guard) LimitAnonymous(ctx context.Context) error { return g.guard.LimitAnonymous(ctx) }

func (g Guard) CheckFailures(ctx context.Context, appKey string) error {
	return g.guard.CheckFailures(ctx, appKey)
}

func (g Guard) Failed(ctx context.Context, appKey string) { g.guard.Failed(ctx, appKey) }

func (g Guard) LimitKeyPair(ctx context.Context, appKey string, own *domain.RateLimit) error {
	return g.guard.LimitKeyPair(ctx, appKey, limitOf(own))
}

// limitOf is a workspace's own limit as the guard takes it; Off (the
// default applies) when it has none.
func limitOf(own *domain.RateLimit) ratelimit.Limit {
	if own == nil {
		return ratelimit.Limit{}
	}
	return ratelimit.Limit{Rate: own.PerSecond, Burst: own.Burst}
}
