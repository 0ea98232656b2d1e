package app

import (
	"context"
	"fmt"
	"time"

	"github.com/liveproctor/workspaces/services/workspace/internal/domain"
)

// KeyPairView is a key pair as the keys routes return it, secret included.
type KeyPairView struct {
	AppKey    string
	AppSecret string
	Name      string
	CreatedAt time.Time
	UpdatedAt time.Time
	ExpiresAt time.Time // zero: does not expire
	// LastUsedAt is when a replica last recorded the pair's use (at most
	// once per domain.KeyUseGranularity); zero: never recorded.
	LastUsedAt time.Time
	Tags       []domain.Tag
}

// ListWorkspaceKeys returns the key pairs of a workspace the caller may see,
// with when each was last used. A portal session's list has no secrets: its
// pages never show one again, and a session's cookie is a browser's, easier
// to lose than a server's key pair.
func (a *App) ListWorkspaceKeys(ctx context.Context, caller domain.Caller, id string) ([]KeyPairView, error) {
	w, err := a.visible(ctx, caller, id)
	if err != nil {
		return nil, err
	}
	keys := w.Keys()
	appKeys := make([]string, len(keys))
	for i, k := range keys {
		appKeys[i] = k.AppKey
	}
	used, err := a.repo.KeysLastUsed(ctx, appKeys)
	if err != nil {
		return nil, fmt.Errorf("read key pairs' last uses: %w", err)
	}
	views := make([]KeyPairView, 0, len(keys))
	for _, k := range keys {
		v, err := a.keyView(w.ID(), k)
		if err != nil {
			return nil, err
		}
		v.LastUsedAt = used[k.AppKey]
		if caller.InPortal() {
			v.AppSecret = ""
		}
		views = append(views, v)
	}
	return views, nil
}

// keyView is k as returned, its secret opened.
func (a *App) keyView(workspaceID string, k domain.KeyPair) (KeyPairView, error) {
	secret, err := a.secrets.Open(k.AppKey, k.SealedSecret)
	if err != nil {
		return KeyPairView{}, fmt.Errorf("open secret of a key pair of %s: %w", workspaceID, err)
	}
	return KeyPairView{
		AppKey: k.AppKey, AppSecret: secret, Name: k.Name, CreatedAt: k.CreatedAt, UpdatedAt: k.UpdatedAt,
		ExpiresAt: k.ExpiresAt, Tags: k.Tags,
	}, nil
}
