package service

import (
	"context"
	"time"

	ltiapp "github.com/liveproctor/workspaces/services/workspace/internal/lti/app"
)

// platformKeysTimeout bounds one fetch of a platform's JWKS.
const platformKeysTimeout = 5 * time.Second

// platformRegistrationTimeout bounds each of a Dynamic Registration's two
// calls to the platform (its configuration, the registration), which an
// administrator's browser waits on.
const platformRegistrationTimeout = 10 * time.Second

// platformTokenTimeout bounds one call to a platform's token endpoint:
// less than the fetch lock's life (15 s), so a fetch ends before another
// replica may take the lock.
const platformTokenTimeout = 10 * time.Second

// platformServiceTimeout bounds one call to a platform's Advantage
// services (a page of members), which the vendor's back end waits on.
const platformServiceTimeout = 10 * time.Second

// toolKeyRetry is the wait after a rotation failed: the keys may be
// missing altogether (a first start with the store down).
const toolKeyRetry = time.Minute

// rotateToolKeys rotates the tool's keys every interval
// (LTI_TOOL_KEY_CHECK_INTERVAL) until ctx ends, sooner again after a
// failure. Replicas that rotate at once are settled by the store's
// revision check.
func (s *Service) rotateToolKeys(ctx context.Context, toolKeys *ltiapp.ToolKeys, every time.Duration) {
	wait := every
	for {
		select {
		case <-ctx.Done():
			return
		case <-time.After(wait):
		}
		wait = every
		if err := toolKeys.Rotate(ctx); err != nil && ctx.Err() == nil {
			s.logger.Warn("rotating the tool's LTI 1.3 keys failed; retrying", "error", err.Error(), "retry_in", toolKeyRetry)
			wait = min(every, toolKeyRetry)
		}
	}
}
