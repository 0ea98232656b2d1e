package app

import (
	"context"
	"time"

	"github.com/liveproctor/workspaces/pkg/ttlcache"
	"github.com/liveproctor/workspaces/services/workspace/internal/domain"
)

// keyUseQueue bounds the uses waiting to be written; past it a use is
// dropped (and noted again on the pair's next call).
const keyUseQueue = 1024

// keyUseWriteTimeout bounds one write of a use.
const keyUseWriteTimeout = 2 * time.Second

// keyUses records when key pairs are used without a database write per
// request: a replica writes a pair's use at most once per
// domain.KeyUseGranularity, from a background goroutine (RunBackground),
// so a request never waits on it.
type keyUses struct {
	recent *ttlcache.Cache[string, struct{}] // pairs whose use was queued within the granularity
	queue  chan keyUse
}

type keyUse struct {
	appKey string
	at     time.Time
}

func newKeyUses(size int, now func() time.Time) *keyUses {
	return &keyUses{
		recent: ttlcache.New[string, struct{}](size, domain.KeyUseGranularity, now),
		queue:  make(chan keyUse, keyUseQueue),
	}
}

// note queues appKey's use at, unless one was queued within the
// granularity. It never blocks.
func (u *keyUses) note(appKey string, at time.Time) {
	if _, ok := u.recent.Get(appKey); ok {
		return
	}
	select {
	case u.queue <- keyUse{appKey: appKey, at: at.UTC().Truncate(time.Millisecond)}:
		u.recent.Set(appKey, struct{}{})
	default:
	}
}

// writeKeyUses writes queued uses until ctx ends. A failed write is only
// logged: lastUsedAt is a hint, not a record.
func (a *App) writeKeyUses(ctx context.Context) {
	for {
		select {
		case <-ctx.Done():
			return
		case u := <-a.uses.queue:
			wctx, cancel := context.WithTimeout(ctx, keyUseWriteTimeout)
			if err := a.repo.RecordKeyUse(wctx, u.appKey, u.at); err != nil {
				a.logger.Warn("recording a key pair's use failed", "error", err.Error())
			}
			cancel()
		}
	}
}
