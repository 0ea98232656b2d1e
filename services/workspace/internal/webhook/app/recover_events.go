package app

import (
	"context"
	"strings"
	"time"

	"github.com/liveproctor/workspaces/pkg/fault"
	"github.com/liveproctor/workspaces/services/workspace/internal/domain"
)

// Recover delivers again, in order, every event an enabled endpoint of a
// workspace the caller owns or manages admits from since on, beside its
// live feed: since is an event id (that event, which the workspace must
// see, and every later one) or an RFC 3339 time (every event from then,
// to the millisecond).
func (e *Endpoints) Recover(ctx context.Context, caller domain.Caller, id, endpointID, since string) error {
	after, byID, err := recoverAfter(since)
	if err != nil {
		return err
	}
	if _, err := e.enabled(ctx, caller, id, endpointID); err != nil {
		return err
	}
	if byID {
		if _, err := e.event(ctx, id, since); err != nil {
			return err
		}
	}
	return e.deliveries.Recover(ctx, id, endpointID, after)
}

// recoverAfter is the event id a recovery from since starts after, and
// whether since is an event id.
func recoverAfter(since string) (after string, byID bool, err error) {
	if _, ok := domain.EventIDTime(since); ok {
		return justBefore(since), true, nil
	}
	t, err := time.Parse(time.RFC3339Nano, since)
	if err != nil {
		return "", false, fault.InvalidField("since", "must be an event id (28 lower-case hex digits) or an RFC 3339 time")
	}
	// Ids made in t's millisecond or later sort after its floor, those
	// made before it before.
	return domain.EventIDFloor(t), false, nil
}

// justBefore is the greatest id less than id (of its length): id less
// one, in hex. The first id of all has none before it but "".
func justBefore(id string) string {
	b := []byte(id)
	for i := len(b) - 1; i >= 0; i-- {
		if b[i] != '0' {
			b[i] = "0123456789abcdef"[strings.IndexByte("0123456789abcdef", b[i])-1]
			return string(b)
		}
		b[i] = 'f'
	}
	return ""
}
