package app

import (
	"context"
	"fmt"
	"time"

	"github.com/liveproctor/workspaces/services/workspace/internal/domain"
)

// KeyPairView is a key pair as the keys route returns it, secret included.
type KeyPairView struct {
	AppKey    string
	AppSecret string
	CreatedAt time.Time
	UpdatedAt time.Time
	Tags      []domain.Tag
}

// ListWorkspaceKeys returns the key pairs of a workspace the caller may see.
func (a *App) ListWorkspaceKeys(ctx context.Context, caller domain.Caller, id string) ([]KeyPairView, error) {
	w, err := a.visible(ctx, caller, id)
	if err != nil {
		return nil, err
	}
	keys := w.Keys()
	views := make([]KeyPairView, 0, len(keys))
	for _, k := range keys {
		secret, err := a.secrets.Open(k.AppKey, k.SealedSecret)
		if err != nil {
			return nil, fmt.Errorf("open secret of a key pair of %s: %w", w.ID(), err)
		}
		views = append(views, KeyPairView{AppKey: k.AppKey, AppSecret: secret, CreatedAt: k.CreatedAt, UpdatedAt: k.UpdatedAt, Tags: k.Tags})
	}
	return views, nil
}
