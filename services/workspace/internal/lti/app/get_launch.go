package app

import (
	"context"

	"github.com/liveproctor/workspaces/pkg/clip"
	"github.com/liveproctor/workspaces/pkg/fault"
	"github.com/liveproctor/workspaces/pkg/ident"
	"github.com/liveproctor/workspaces/services/workspace/internal/domain"
)

// Launches reads the remembered LTI 1.3 launches for the vendor's back
// end: it needs the workspaces' tenancy rule and the launches' store.
type Launches struct {
	ws      Workspaces
	records LTI13LaunchStore
}

// NewLaunches returns the launches' use cases.
func NewLaunches(ws Workspaces, records LTI13LaunchStore) *Launches {
	notNil(ws, records)
	return &Launches{ws: ws, records: records}
}

// Get returns a launch of a workspace the caller owns or manages. A launch
// that is unknown, past its retention or another workspace's is one
// not-found answer.
func (l *Launches) Get(ctx context.Context, caller domain.Caller, id, launchID string) (LTI13LaunchRecord, error) {
	if _, err := l.ws.Managed(ctx, caller, id); err != nil {
		return LTI13LaunchRecord{}, err
	}
	notFound := fault.New(fault.NotFound, "LTI launch %q not found", clip.Runes(launchID, 64))
	if !ident.IsSecret(launchID) {
		return LTI13LaunchRecord{}, notFound
	}
	r, ok, err := l.records.Get(ctx, id, launchID)
	if err != nil {
		return LTI13LaunchRecord{}, err
	}
	if !ok {
		return LTI13LaunchRecord{}, notFound
	}
	return r, nil
}
