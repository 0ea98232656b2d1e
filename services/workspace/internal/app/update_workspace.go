package app

import (
	"context"

	"github.com/liveproctor/workspaces/services/workspace/internal/domain"
)

// UpdateInput is an update request: the changes to make to a workspace.
type UpdateInput struct {
	ID      string // the workspace to update
	Changes domain.Changes
	// Precondition, when set, must hold for the workspace as read.
	Precondition Precondition
}

// UpdateWorkspace applies in to a workspace the caller manages.
func (a *App) UpdateWorkspace(ctx context.Context, caller domain.Caller, in UpdateInput) (*domain.Workspace, error) {
	c, err := in.Changes.Check()
	if err != nil {
		return nil, err
	}
	read := func() (*domain.Workspace, error) { return a.managedActive(ctx, caller, in.ID) }
	w, err := a.write(ctx, by(caller), read, in.Precondition, func(w *domain.Workspace) (bool, error) {
		// What needs other workspaces is checked against w as read, after
		// what the entity checks alone.
		newParent := c.ParentID != nil && *c.ParentID != "" && *c.ParentID != w.ParentID()
		shared := w.Products()
		if err := w.Update(c, a.timestamp()); err != nil {
			return false, err
		}
		if newParent {
			if err := a.checkParent(ctx, caller, w.ID(), *c.ParentID); err != nil {
				return false, err
			}
		}
		if c.Products != nil {
			if err := a.checkCallerProducts(ctx, caller, *c.Products, shared); err != nil {
				return false, err
			}
		}
		return true, nil
	})
	if err == nil && (c.RateLimit != nil || c.RemoveRateLimit) {
		// The key pairs' cached credentials, and the auth service's
		// remembered access, carry the old limit: every replica drops
		// them.
		a.forgetKeys(ctx, w)
	}
	return w, err
}
