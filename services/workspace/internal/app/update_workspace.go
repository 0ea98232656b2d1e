package app

import (
	"context"
	"slices"

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
	return a.write(ctx, read, in.Precondition, func(w *domain.Workspace) (bool, error) {
		if c.ParentID != nil && *c.ParentID != "" && *c.ParentID != w.ParentID {
			if err := a.checkParent(ctx, caller, w.ID, *c.ParentID); err != nil {
				return false, err
			}
		}
		if c.Products != nil {
			if err := a.checkProducts(ctx, caller, *c.Products, w); err != nil {
				return false, err
			}
		}
		if c.Name != nil {
			w.Name = *c.Name
		}
		if c.Type != nil {
			w.Type = *c.Type
		}
		if c.ParentID != nil {
			w.ParentID = *c.ParentID
		}
		if c.Address != nil {
			w.Address = *c.Address
		}
		if c.Products != nil {
			w.Products = slices.Clone(*c.Products)
		}
		if c.ObjectiveDocuments != nil {
			w.ObjectiveDocuments = slices.Clone(*c.ObjectiveDocuments)
		}
		w.UpdatedAt = a.timestamp()
		return true, nil
	})
}
