package app

import (
	"context"
	"errors"
	"fmt"

	"github.com/liveproctor/workspaces/pkg/fault"
	"github.com/liveproctor/workspaces/services/workspace/internal/domain"
)

// writeAttempts bounds how often a write reads the workspace again after a
// concurrent writer changed it between read and write.
const writeAttempts = 3

// errConcurrentChanges answers a change without a precondition that lost
// the race to concurrent writers on every attempt. The caller set no
// precondition, so this is not PreconditionFailed: reading again and
// retrying may succeed.
var errConcurrentChanges = fault.New(fault.Aborted,
	"the workspace kept changing under concurrent requests: read it again and retry")

// write is how a stored workspace changes: read it, check the caller's
// precondition, apply the change, and store the result if the workspace is
// still at the revision read. When another request wrote it in between, it
// starts over, writeAttempts times in all. With a precondition the revision
// the caller named is gone by then, which is PreconditionFailed at once;
// without one, losing every attempt is Aborted.
//
// read decides which workspaces the change may see, and its answer comes
// before the precondition's (a deleted workspace is not found, whatever the
// caller's etag). apply reports whether it changed anything; when it did
// not, nothing is written.
//
// The events the change records are stored with it, attributed to who, and
// published before write returns: a change is acknowledged only with its
// events in the audit trail (a failed publish is Unavailable; the change
// stays stored and the relay publishes its events).
func (a *App) write(ctx context.Context, who author, read func() (*domain.Workspace, error), cond Precondition,
	apply func(*domain.Workspace) (bool, error)) (*domain.Workspace, error) {
	for attempt := 1; ; attempt++ {
		w, err := read()
		if err != nil {
			return nil, err
		}
		if err := cond.check(w); err != nil {
			return nil, err
		}
		changed, err := apply(w)
		if err != nil {
			return nil, err
		}
		if !changed {
			return w, nil
		}
		w.Attribute(who.actor, who.requestID)
		stored, err := a.repo.Update(ctx, w)
		switch {
		case err == nil:
			if err := a.publish(ctx, stored); err != nil {
				return nil, err
			}
			return stored, nil
		case !errors.Is(err, domain.ErrRevisionChanged):
			return nil, fmt.Errorf("write workspace %s: %w", w.ID(), err)
		case cond.set:
			return nil, errPreconditionFailed
		case attempt == writeAttempts:
			return nil, errConcurrentChanges
		}
	}
}

// readFirst is a write's read that answers w, already read (and checked) by
// the caller, on the first attempt and reads again with read on later ones,
// so a write whose caller looked at the workspace first costs no second
// read.
func readFirst(w *domain.Workspace, read func() (*domain.Workspace, error)) func() (*domain.Workspace, error) {
	return func() (*domain.Workspace, error) {
		if first := w; first != nil {
			w = nil
			return first, nil
		}
		return read()
	}
}
