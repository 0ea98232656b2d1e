package app

import (
	"context"
	"time"

	"github.com/liveproctor/workspaces/services/workspace/internal/domain"
)

// RotateKeyResult is a rotation: the pair rotated, as it now is (with its
// expiresAt), and its successor, secret included.
type RotateKeyResult struct {
	Previous  KeyPairView
	Successor KeyPairView
	Workspace *domain.Workspace
}

// RotateWorkspaceKey gives the pair appKey of a workspace the caller owns
// or manages a successor with the same name, role and tags, and makes the
// pair expire expireAfter from now (nil: domain.DefaultExpireAfter). Both
// work until then.
func (a *App) RotateWorkspaceKey(ctx context.Context, caller domain.Caller, id, appKey string, expireAfter *time.Duration) (RotateKeyResult, error) {
	overlap := domain.DefaultExpireAfter
	if expireAfter != nil {
		overlap = *expireAfter
	}
	if err := domain.CheckExpireAfter(overlap); err != nil {
		return RotateKeyResult{}, err
	}
	w, err := a.keyManaged(ctx, caller, id)
	if err != nil {
		return RotateKeyResult{}, err
	}
	if _, ok := w.ActiveKey(appKey, a.now()); !ok {
		return RotateKeyResult{}, keyNotFound(appKey)
	}
	sealed, err := a.reserveNewKey(ctx, id)
	if err != nil {
		return RotateKeyResult{}, err
	}
	var old, added domain.KeyPair
	read := readFirst(w, func() (*domain.Workspace, error) { return a.keyManaged(ctx, caller, id) })
	w, err = a.write(ctx, by(caller), read, Precondition{},
		func(w *domain.Workspace) (bool, error) {
			old, added, err = w.RotateKey(appKey, sealed, overlap, a.timestamp())
			return err == nil, err
		})
	if err != nil {
		return RotateKeyResult{}, keyError(err, appKey)
	}
	// The old pair's cached credential knows no expiry yet.
	a.forgetKeyPairs(ctx, w.ID(), appKey)
	prev, err := a.keyView(w.ID(), old)
	if err != nil {
		return RotateKeyResult{}, err
	}
	next, err := a.keyView(w.ID(), added)
	if err != nil {
		return RotateKeyResult{}, err
	}
	return RotateKeyResult{Previous: prev, Successor: next, Workspace: w}, nil
}
