package app

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/liveproctor/workspaces/pkg/fault"
	"github.com/liveproctor/workspaces/services/workspace/internal/domain"
)

// UpdateInput is an update request: the changes to make to a workspace.
type UpdateInput struct {
	ID      string // the workspace to update
	Changes domain.Changes
	// Precondition, when set, must hold for the workspace as read.
	Precondition Precondition
}

// updateAttempts bounds re-reads when a concurrent writer changed the
// workspace between read and write (only without a precondition).
const updateAttempts = 3

// errConcurrentChanges answers a change without a precondition that lost
// the race to concurrent writers on every attempt. The caller set no
// precondition, so this is not PreconditionFailed: reading again and
// retrying may succeed.
var errConcurrentChanges = fault.New(fault.Aborted,
	"the workspace kept changing under concurrent requests: read it again and retry")

// retryUpdate decides what a failed repository Update means on the given
// attempt: nil to read the workspace again and retry, else the error to
// answer. With a precondition the caller's revision is gone, which is
// PreconditionFailed at once.
func retryUpdate(op string, err error, cond Precondition, attempt int) error {
	switch {
	case !errors.Is(err, domain.ErrRevisionChanged):
		return fmt.Errorf("%s: %w", op, err)
	case cond.set:
		return errPreconditionFailed
	case attempt >= updateAttempts:
		return errConcurrentChanges
	}
	return nil
}

// UpdateWorkspace applies in to a workspace the caller manages.
func (a *App) UpdateWorkspace(ctx context.Context, caller domain.Caller, in UpdateInput) (*domain.Workspace, error) {
	c, err := in.Changes.Check()
	if err != nil {
		return nil, err
	}

	for attempt := 1; ; attempt++ {
		w, err := a.managed(ctx, caller, in.ID)
		if err != nil {
			return nil, err
		}
		if w.Deleted() {
			return nil, notFound(in.ID)
		}
		if err := in.Precondition.check(w); err != nil {
			return nil, err
		}
		if c.ParentID != nil && *c.ParentID != "" && *c.ParentID != w.ParentID {
			if err := a.checkParent(ctx, caller, w.ID, *c.ParentID); err != nil {
				return nil, err
			}
		}
		if c.Products != nil {
			if err := a.checkProducts(ctx, caller, *c.Products, w); err != nil {
				return nil, err
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
		err = a.repo.Update(ctx, w)
		if err == nil {
			return w, nil
		}
		if err := retryUpdate("update workspace", err, in.Precondition, attempt); err != nil {
			return nil, err
		}
	}
}

// setDeleted soft-deletes or restores a workspace the caller manages.
func (a *App) setDeleted(ctx context.Context, caller domain.Caller, id string, cond Precondition, deleted bool) (*domain.Workspace, error) {
	for attempt := 1; ; attempt++ {
		w, err := a.managed(ctx, caller, id)
		if err != nil {
			return nil, err
		}
		if deleted && w.Deleted() {
			return nil, notFound(id) // already gone from gets and lists
		}
		if !deleted && !w.Deleted() {
			return w, nil // undelete of an active workspace changes nothing
		}
		if err := cond.check(w); err != nil {
			return nil, err
		}
		now := a.timestamp()
		w.UpdatedAt = now
		w.TokenCutoff = now
		if deleted {
			w.DeletedAt = now
		} else {
			w.DeletedAt = time.Time{}
		}
		err = a.repo.Update(ctx, w)
		if err == nil {
			a.forgetKeys(w)
			if deleted && a.revoker != nil {
				a.revoker.RevokeWorkspaceTokens(w.ID)
			}
			return w, nil
		}
		if err := retryUpdate("save workspace", err, cond, attempt); err != nil {
			return nil, err
		}
	}
}
