package app

import (
	"slices"

	"github.com/liveproctor/workspaces/pkg/fault"
	"github.com/liveproctor/workspaces/services/workspace/internal/domain"
)

// Precondition is a caller's condition on a change: the change applies only
// while the workspace is at one of the revisions it names. The zero value
// sets no condition.
type Precondition struct {
	set       bool
	revisions []int64
}

// IfRevision returns a precondition that holds at any of revisions. With
// none it never holds: the caller named no revision a workspace can have.
func IfRevision(revisions ...int64) Precondition {
	return Precondition{set: true, revisions: revisions}
}

var errPreconditionFailed = fault.New(fault.PreconditionFailed,
	"the workspace has changed since it was read (etag mismatch): read it again and retry")

// check answers PreconditionFailed unless p holds for w.
func (p Precondition) check(w *domain.Workspace) error {
	if p.set && !slices.Contains(p.revisions, w.Revision()) {
		return errPreconditionFailed
	}
	return nil
}
