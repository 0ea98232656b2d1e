package app

import (
	"context"
	"fmt"

	"github.com/liveproctor/workspaces/services/workspace/internal/domain"
)

// RevokeKeyResult is a revoked pair and the workspace as stored after.
type RevokeKeyResult struct {
	Revoked   KeyPairView
	Workspace *domain.Workspace
}

// RevokeWorkspaceKey removes the pair appKey from a workspace the caller
// owns or manages, at once: this replica's credential cache drops it, and
// every other replica of both services is told (ChangeNotifier). Its app
// key stays reserved, so it is never issued again.
func (a *App) RevokeWorkspaceKey(ctx context.Context, caller domain.Caller, id, appKey string) (RevokeKeyResult, error) {
	// Retire the key first (see domain.Repository.RetireAppKeys), once the
	// revocation is known to be allowed on the workspace as read.
	current, err := a.keyManaged(ctx, caller, id)
	if err != nil {
		return RevokeKeyResult{}, err
	}
	if _, err := current.RevokeKey(appKey, a.timestamp()); err == nil {
		if err := a.repo.RetireAppKeys(ctx, []string{appKey}); err != nil {
			return RevokeKeyResult{}, fmt.Errorf("retire the revoked app key: %w", err)
		}
	}
	var removed domain.KeyPair
	w, err := a.write(ctx, by(caller), func() (*domain.Workspace, error) { return a.keyManaged(ctx, caller, id) }, Precondition{},
		func(w *domain.Workspace) (bool, error) {
			var err error
			removed, err = w.RevokeKey(appKey, a.timestamp())
			return err == nil, err
		})
	if err != nil {
		return RevokeKeyResult{}, keyError(err, appKey)
	}
	a.forgetKeyPairs(ctx, w.ID(), appKey)
	view, err := a.keyView(w.ID(), removed)
	if err != nil {
		return RevokeKeyResult{}, err
	}
	return RevokeKeyResult{Revoked: view, Workspace: w}, nil
}
