package app

import (
	"context"
	"errors"
	"time"

	"github.com/liveproctor/workspaces/pkg/fault"
	"github.com/liveproctor/workspaces/pkg/ttlcache"
	ltidomain "github.com/liveproctor/workspaces/services/workspace/internal/lti/domain"
)

// LaunchHealthStore keeps the launch health of LTI 1.3 registrations,
// shared by every replica (MongoDB): one record per registration, changed
// by writes that need no read first, so that recording costs a launch one
// round trip and replicas recording at once lose nothing.
type LaunchHealthStore interface {
	// Accepted records that a launch through the registration of
	// workspaceID was accepted at (the latest such time is kept).
	Accepted(ctx context.Context, workspaceID, registrationID string, at time.Time) error
	// Refused records f first among the failures of each of the
	// registrations of workspaceID, in one write, keeping the newest
	// ltidomain.MaxRecentFailures.
	Refused(ctx context.Context, workspaceID string, registrationIDs []string, f ltidomain.LaunchFailure) error
	// Health returns the health of workspaceID's registrations among
	// registrationIDs, in one read, by registration id; a registration
	// without a record is missing (no launch yet).
	Health(ctx context.Context, workspaceID string, registrationIDs []string) (map[string]ltidomain.LaunchHealth, error)
	// Forget removes the record of a deleted registration.
	Forget(ctx context.Context, workspaceID, registrationID string) error
}

// RegistrationView is a registration as an answer renders it: with its
// launch health.
type RegistrationView struct {
	ltidomain.Registration
	Health ltidomain.LaunchHealth
}

// launchHealthWrite bounds the recording of a launch or a refusal: the
// answer waits for it that long at most, and a record not written by then
// is logged, never answered.
const launchHealthWrite = time.Second

// recentLaunchesSize bounds the registrations a replica remembers having
// recorded a launch of within ltidomain.LastLaunchGranularity; past it,
// the oldest is forgotten and only costs a write more.
const recentLaunchesSize = 10_000

// launchHealth records how a registration's launches fare, for the
// logins' and launches' use cases, which never fail over it.
type launchHealth struct {
	store LaunchHealthStore
	s     Settings
	// recent holds the registrations whose accepted launch this replica
	// recorded within ltidomain.LastLaunchGranularity (nil: the logins',
	// which record none).
	recent *ttlcache.Cache[string, struct{}]
}

// newLaunchHealth returns the recording of the launches' use case.
func newLaunchHealth(store LaunchHealthStore, s Settings) launchHealth {
	return launchHealth{store: store, s: s,
		recent: ttlcache.New[string, struct{}](recentLaunchesSize, ltidomain.LastLaunchGranularity, s.Now)}
}

// accepted records an accepted launch of the registration, unless this
// replica recorded one within ltidomain.LastLaunchGranularity. The
// registration is marked before the write, so the launches of a class
// arriving together cost it one write, not one each; a write that fails
// is logged, and the next is a granularity later.
func (h launchHealth) accepted(ctx context.Context, workspaceID, registrationID string) {
	if _, ok := h.recent.Get(registrationID); ok {
		return
	}
	h.recent.Set(registrationID, struct{}{})
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), launchHealthWrite)
	defer cancel()
	if err := h.store.Accepted(ctx, workspaceID, registrationID, h.s.timestamp()); err != nil {
		h.s.Logger.Warn("an accepted LTI 1.3 launch was not recorded in its registration's health",
			"workspace", workspaceID, "registration", registrationID, "error", err.Error())
	}
}

// refused records the refusal err of the request requestID, when it is
// one a registration's administrator can act on (failureReason), on the
// registrations whom finds: finding them and the write are bounded
// together.
func (h launchHealth) refused(ctx context.Context, err error, requestID string, whom func(context.Context) (blame, error)) {
	reason, ok := failureReason(err)
	if !ok {
		return
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), launchHealthWrite)
	defer cancel()
	b, err := whom(ctx)
	if err != nil {
		h.s.Logger.Warn("a refused LTI 1.3 login or launch was not recorded: its registrations could not be found",
			"request_id", requestID, "error", err.Error())
		return
	}
	if len(b.registrationIDs) == 0 {
		return
	}
	if b.reason != "" {
		reason = b.reason
	}
	f := ltidomain.NewLaunchFailure(h.s.timestamp(), reason, requestID)
	if err := h.store.Refused(ctx, b.workspaceID, b.registrationIDs, f); err != nil {
		h.s.Logger.Warn("a refused LTI 1.3 login or launch was not recorded in its registrations' health",
			"workspace", b.workspaceID, "registrations", b.registrationIDs, "request_id", requestID, "error", err.Error())
	}
}

// blame is whom a refused login or launch is recorded on: registrations of
// one workspace (none: nobody's), and what to tell their administrator
// when the refusal's own message would not say enough (reason; empty: the
// message).
type blame struct {
	workspaceID     string
	registrationIDs []string
	reason          string
}

// blameOne finds the registration registrationID of workspaceID.
func blameOne(workspaceID, registrationID string) func(context.Context) (blame, error) {
	return func(context.Context) (blame, error) {
		return blame{workspaceID: workspaceID, registrationIDs: []string{registrationID}}, nil
	}
}

// failureReason is the reason a refusal is recorded with, when it is one a
// registration's administrator can act on: a refusal of what the platform
// sent (Invalid, Unauthenticated), its message as the refusal page shows
// it, or the platform's key set out of reach. Our own failures (a store
// unavailable, a bug) and the address's limits are not the registration's.
func failureReason(err error) (string, bool) {
	f, ok := fault.As(err)
	switch {
	case !ok:
		return "", false
	case f.Kind == fault.Invalid || f.Kind == fault.Unauthenticated:
		return f.Message, true
	case errors.Is(err, errLTI13KeysDown):
		return errLTI13KeysDown.Message, true
	}
	return "", false
}

// registrationViews are regs of workspaceID with their launch health, read
// in one query.
func registrationViews(ctx context.Context, store LaunchHealthStore, workspaceID string, regs []ltidomain.Registration) ([]RegistrationView, error) {
	out := make([]RegistrationView, len(regs))
	if len(regs) == 0 {
		return out, nil
	}
	ids := make([]string, len(regs))
	for i, r := range regs {
		ids[i] = r.ID
	}
	health, err := store.Health(ctx, workspaceID, ids)
	if err != nil {
		return nil, err
	}
	for i, r := range regs {
		out[i] = RegistrationView{Registration: r, Health: health[r.ID]}
	}
	return out, nil
}
