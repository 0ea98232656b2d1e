package app

import (
	"context"
	"errors"
	"fmt"

	"github.com/liveproctor/workspaces/services/workspace/internal/domain"
)

// sweepBatch bounds the workspaces one sweep visits.
const sweepBatch = 100

// SweepExpiredKeys removes key pairs past their expiresAt from the
// workspaces holding them and returns what it removed, by workspace id.
// Expired pairs stop authenticating at their expiresAt whether swept or
// not; the sweep keeps documents small and the keys route current.
func (a *App) SweepExpiredKeys(ctx context.Context) (map[string][]domain.KeyPair, error) {
	ids, err := a.repo.WithExpiredKeys(ctx, a.now(), sweepBatch)
	if err != nil {
		return nil, fmt.Errorf("find expired key pairs: %w", err)
	}
	swept := map[string][]domain.KeyPair{}
	var errs []error
	for _, id := range ids {
		if err := a.retireExpiredKeys(ctx, id); err != nil {
			errs = append(errs, fmt.Errorf("sweep %s: %w", id, err))
			continue
		}
		var removed []domain.KeyPair
		_, err := a.write(ctx, bySystem, func() (*domain.Workspace, error) { return a.repo.Get(ctx, id) }, Precondition{},
			func(w *domain.Workspace) (bool, error) {
				removed = w.RemoveExpiredKeys(a.now())
				return len(removed) > 0, nil
			})
		if err != nil {
			errs = append(errs, fmt.Errorf("sweep %s: %w", id, err))
			continue
		}
		if len(removed) > 0 {
			swept[id] = removed
			appKeys := make([]string, len(removed))
			for i, k := range removed {
				appKeys[i] = k.AppKey
			}
			a.forgetKeyPairs(ctx, id, appKeys...)
		}
	}
	return swept, errors.Join(errs...)
}

// retireExpiredKeys retires the app keys of workspace id's expired pairs
// before the write that removes them (see domain.Repository.RetireAppKeys).
// An expired pair never comes back, so retiring early is always right.
func (a *App) retireExpiredKeys(ctx context.Context, id string) error {
	w, err := a.repo.Get(ctx, id)
	if err != nil {
		return err
	}
	var appKeys []string
	for _, k := range w.RemoveExpiredKeys(a.now()) { // on this copy only
		appKeys = append(appKeys, k.AppKey)
	}
	return a.repo.RetireAppKeys(ctx, appKeys)
}
