package app

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/liveproctor/workspaces/pkg/clip"
	"github.com/liveproctor/workspaces/pkg/fault"
	"github.com/liveproctor/workspaces/services/workspace/internal/domain"
)

// notFound is the answer for a workspace that does not exist, is deleted, or
// is not the caller's to see: the same in each case, so ids don't leak.
func notFound(id string) error {
	return fault.New(fault.NotFound, "workspace %q not found", clip.Runes(id, 128))
}

// errSelfChange: a workspace is changed by those that manage it, not by itself.
var errSelfChange = fault.New(fault.PermissionDenied,
	"a workspace cannot update, delete or undelete itself; call with a key pair of a workspace that manages it")

// load returns workspace id, deleted or not; an unknown id is the usual
// not-found answer.
func (a *App) load(ctx context.Context, id string) (*domain.Workspace, error) {
	w, err := a.repo.Get(ctx, id)
	if errors.Is(err, domain.ErrNotFound) {
		return nil, notFound(id)
	}
	if err != nil {
		return nil, fmt.Errorf("get workspace: %w", err)
	}
	return w, nil
}

// visible returns the active workspace id if the caller may see it.
func (a *App) visible(ctx context.Context, caller domain.Caller, id string) (*domain.Workspace, error) {
	w, err := a.load(ctx, id)
	if err != nil {
		return nil, err
	}
	if !seenBy(w, caller) {
		return nil, notFound(id)
	}
	return w, nil
}

// seenBy reports whether caller may see w: it is active, and within the
// caller's reach.
func seenBy(w *domain.Workspace, caller domain.Caller) bool {
	return !w.Deleted() && reaches(w, caller)
}

// reaches reports whether w is within caller's reach, deleted or not: a key
// pair's own workspace and those it manages; an administrator in the
// portal's own workspace only.
func reaches(w *domain.Workspace, caller domain.Caller) bool {
	if caller.InPortal() {
		return w.ID() == caller.WorkspaceID
	}
	return w.VisibleTo(caller.WorkspaceID)
}

// managed returns workspace id, deleted or not, if the caller manages it.
// The caller's own workspace is 403, anything else it may not see is 404.
// An administrator in the portal manages none.
func (a *App) managed(ctx context.Context, caller domain.Caller, id string) (*domain.Workspace, error) {
	if id == caller.WorkspaceID {
		return nil, errSelfChange
	}
	w, err := a.load(ctx, id)
	if err != nil {
		return nil, err
	}
	if caller.InPortal() || !w.ManagedBy(caller.WorkspaceID) {
		return nil, notFound(id)
	}
	return w, nil
}

// managedActive returns workspace id if the caller manages it and it is not
// deleted: a workspace an update or a delete may change.
func (a *App) managedActive(ctx context.Context, caller domain.Caller, id string) (*domain.Workspace, error) {
	w, err := a.managed(ctx, caller, id)
	if err != nil {
		return nil, err
	}
	if w.Deleted() {
		return nil, notFound(id) // gone from gets and lists
	}
	return w, nil
}

// keyManaged returns the active workspace id if the caller may manage its
// key pairs: the workspace itself or one that manages it. Unlike update and
// delete, a workspace manages its own pairs, so that a vendor can rotate a
// leaked secret without its manager.
func (a *App) keyManaged(ctx context.Context, caller domain.Caller, id string) (*domain.Workspace, error) {
	return a.visible(ctx, caller, id)
}

// keyNotFound answers a key pair the workspace does not hold (or that has
// expired).
func keyNotFound(appKey string) error {
	return fault.New(fault.NotFound, "key pair %q not found", clip.Runes(appKey, 64))
}

// keyError names the app key in the domain's not-found answer.
func keyError(err error, appKey string) error {
	if errors.Is(err, domain.ErrKeyNotFound) {
		return keyNotFound(appKey)
	}
	return err
}

// checkProducts refuses to share a product the caller's own workspace does
// not hold. Products already shared (kept by this request) are not checked
// again.
func checkProducts(own *domain.Workspace, products, shared []string) error {
	for i, bank := range products {
		if slices.Contains(shared, bank) || own.HoldsProduct(bank) {
			continue
		}
		field := fmt.Sprintf("products[%d]", i)
		return &fault.Error{
			Kind:    fault.PermissionDenied,
			Message: fmt.Sprintf("%s: your workspace does not hold product %q, so it cannot share it", field, bank),
			Fields:  []fault.FieldViolation{{Field: field, Description: "not held by the caller's workspace"}},
		}
	}
	return nil
}

// checkCallerProducts is checkProducts with the caller's workspace read
// only when a product needs checking.
func (a *App) checkCallerProducts(ctx context.Context, caller domain.Caller, products, shared []string) error {
	if !slices.ContainsFunc(products, func(bank string) bool { return !slices.Contains(shared, bank) }) {
		return nil
	}
	own, err := a.repo.Get(ctx, caller.WorkspaceID)
	if err != nil {
		return fmt.Errorf("get caller workspace: %w", err)
	}
	return checkProducts(own, products, shared)
}

// parentNotFound answers a parent the caller may not see.
func parentNotFound(parentID string) error {
	return &fault.Error{
		Kind:    fault.NotFound,
		Message: fmt.Sprintf("parent: workspace %q not found", clip.Runes(parentID, 128)),
		Fields:  []fault.FieldViolation{{Field: "parent", Description: "not found"}},
	}
}

// maxParentDepth bounds the walk up a parent chain.
const maxParentDepth = 100

// checkParent makes sure parentID is a workspace the caller may see and that
// making it child's parent forms no cycle through other workspaces (the
// entity refuses to be its own parent).
func (a *App) checkParent(ctx context.Context, caller domain.Caller, child, parentID string) error {
	parent, err := a.visible(ctx, caller, parentID)
	if fault.KindOf(err) == fault.NotFound {
		return parentNotFound(parentID)
	}
	if err != nil {
		return err
	}
	for depth := 0; parent.ParentID() != ""; depth++ {
		if parent.ParentID() == child {
			return fault.InvalidField("parent", "would make a cycle: the workspace is an ancestor of that parent")
		}
		if depth == maxParentDepth {
			return fault.InvalidField("parent", fmt.Sprintf("the parent chain is deeper than %d", maxParentDepth))
		}
		next, err := a.repo.Get(ctx, parent.ParentID())
		if errors.Is(err, domain.ErrNotFound) {
			return nil // a dangling ancestor ends the chain
		}
		if err != nil {
			return fmt.Errorf("get ancestor: %w", err)
		}
		parent = next
	}
	return nil
}
