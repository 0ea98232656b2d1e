package mongoconn

import (
	"context"

	"github.com/liveproctor/workspaces/pkg/breaker"
)

// Through returns the Do that runs every operation through b, which the
// caller probes and builds with Unreachable as its classifier; with a nil
// b, operations go straight to the store.
func Through(b *breaker.Breaker) Do {
	if b == nil {
		return func(ctx context.Context, op func(context.Context) error) error { return op(ctx) }
	}
	return b.Do
}
