package app

import (
	"context"
	"errors"
	"fmt"

	"github.com/liveproctor/workspaces/pkg/ident"
	"github.com/liveproctor/workspaces/services/workspace/internal/domain"
)

// keyAttempts bounds retries after a generated app key turned out to be
// taken (practically never: keys are random UUIDs).
const keyAttempts = 5

// CreateKeyResult is a created key pair, secret included, and the
// workspace as stored after the change.
type CreateKeyResult struct {
	Key       KeyPairView
	Workspace *domain.Workspace
}

// CreateWorkspaceKey adds a key pair to a workspace the caller manages
// or owns: the workspace itself may add pairs, to rotate without its
// managers.
func (a *App) CreateWorkspaceKey(ctx context.Context, caller domain.Caller, id string, k domain.NewKey) (CreateKeyResult, error) {
	k, err := domain.CheckNewKey(k)
	if err != nil {
		return CreateKeyResult{}, err
	}
	current, err := a.keyManaged(ctx, caller, id)
	if err != nil {
		return CreateKeyResult{}, err
	}
	sealed, err := a.reserveNewKey(ctx, id)
	if err != nil {
		return CreateKeyResult{}, err
	}
	var added domain.KeyPair
	read := readFirst(current, func() (*domain.Workspace, error) { return a.keyManaged(ctx, caller, id) })
	w, err := a.write(ctx, by(caller), read, Precondition{},
		func(w *domain.Workspace) (bool, error) {
			added, err = w.CreateKey(k, sealed, a.timestamp())
			return err == nil, err
		})
	if err != nil {
		return CreateKeyResult{}, err
	}
	view, err := a.keyView(w.ID(), added)
	if err != nil {
		return CreateKeyResult{}, err
	}
	return CreateKeyResult{Key: view, Workspace: w}, nil
}

// reserveNewKey generates a key pair and reserves its app key for the
// workspace, before any write lists it (see domain.Repository). A write
// that fails afterwards leaves a reservation no workspace lists: it never
// authenticates.
func (a *App) reserveNewKey(ctx context.Context, workspaceID string) (domain.SealedKey, error) {
	for attempt := 1; ; attempt++ {
		sealed, err := a.seal(ident.NewUUID(), ident.NewUUID())
		if err != nil {
			return domain.SealedKey{}, err
		}
		err = a.repo.ReserveAppKey(ctx, workspaceID, sealed.AppKey)
		switch {
		case err == nil:
			return sealed, nil
		case errors.Is(err, domain.ErrAppKeyTaken) && attempt < keyAttempts:
			continue
		default:
			return domain.SealedKey{}, fmt.Errorf("reserve app key: %w", err)
		}
	}
}
