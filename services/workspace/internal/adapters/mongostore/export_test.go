package mongostore

import "context"

// StopCompactionAt makes r's compactions end at step ("written",
// "flipped" or "folded") with err, as a crash there would; "" clears it.
func StopCompactionAt(r *Repository, step string, err error) {
	if step == "" {
		r.stopAt = nil
		return
	}
	r.stopAt = func(s string) error {
		if s == step {
			return err
		}
		return nil
	}
}

// CompactListsNow is CompactLists with any pending change due.
func CompactListsNow(ctx context.Context, r *Repository) (bool, error) {
	return r.compactLists(ctx, true)
}
