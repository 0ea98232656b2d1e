package app

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/liveproctor/workspaces/pkg/fault"
	"github.com/liveproctor/workspaces/pkg/ident"
	"github.com/liveproctor/workspaces/services/workspace/internal/domain"
	ltidomain "github.com/liveproctor/workspaces/services/workspace/internal/lti/domain"
)

// Registrations are the use cases of a workspace's LTI 1.3 registrations
// (list, get, create, delete, their deployments) and of its LTI
// configuration: they need the workspace side, and the registrations'
// launch health, which every answer renders.
type Registrations struct {
	registrationWriter
	health LaunchHealthStore
}

// NewRegistrations returns the registrations' use cases over ws and the
// launch health in health.
func NewRegistrations(ws Workspaces, health LaunchHealthStore, s Settings) *Registrations {
	notNil(ws, health)
	return &Registrations{registrationWriter: registrationWriter{ws: ws, s: s.withDefaults()}, health: health}
}

// healthOf is the launch health of workspaceID's registrationID.
func (r *Registrations) healthOf(ctx context.Context, workspaceID, registrationID string) (ltidomain.LaunchHealth, error) {
	health, err := r.health.Health(ctx, workspaceID, []string{registrationID})
	if err != nil {
		return ltidomain.LaunchHealth{}, err
	}
	return health[registrationID], nil
}

// forgetHealth removes a deleted registration's launch health. A failure
// is logged, not answered: the record is then left behind, where nothing
// reads it, since a registration's id is never used again.
func (r *Registrations) forgetHealth(ctx context.Context, workspaceID, registrationID string) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	if err := r.health.Forget(ctx, workspaceID, registrationID); err != nil {
		r.s.Logger.Warn("a deleted LTI registration's launch health was left behind", "registration", registrationID, "error", err.Error())
	}
}

// reservationGrace is how old a reservation of an (issuer, client id)
// pair that no workspace lists must be before another registration takes
// the pair over. A create reserves, then writes within its request's
// deadline (seconds); a reservation older than that and still unlisted was
// left by a create that failed or a delete that stopped before releasing
// it. Younger ones may be a create in flight: the pair is taken.
const reservationGrace = 5 * time.Minute

// registrationWriter adds registrations: Registrations.Create and a
// Dynamic Registration both do.
type registrationWriter struct {
	ws Workspaces
	s  Settings
}

// add adds the registration in to the workspace current, as actor in
// requestID: the pair is reserved store-wide first, then listed by a
// revision-checked write of the workspace (read again by reread on a lost
// race), in which note, when given, records more about the change.
func (r registrationWriter) add(ctx context.Context, actor domain.Actor, requestID string, current *domain.Workspace,
	reread func() (*domain.Workspace, error), in ltidomain.NewRegistration, note func(w *domain.Workspace, now time.Time)) (ltidomain.Registration, error) {
	if err := current.LTIRegistrations().CanAdd(in.Issuer, in.ClientID); err != nil {
		return ltidomain.Registration{}, err
	}
	held := domain.LTIReservation{WorkspaceID: current.ID(), RegistrationID: ident.NewUUID(), CreatedAt: r.s.timestamp()}
	if err := r.reserve(ctx, in.Issuer, in.ClientID, held); err != nil {
		return ltidomain.Registration{}, err
	}
	var added ltidomain.Registration
	err := r.ws.Write(ctx, actor, requestID, current, reread, func(w *domain.Workspace) (bool, error) {
		now := r.s.timestamp()
		var err error
		if added, err = w.AddLTIRegistration(held.RegistrationID, in, r.s.Policy, now); err == nil && note != nil {
			note(w, now)
		}
		return err == nil, err
	})
	if err != nil {
		if refused(err) {
			r.release(ctx, in.Issuer, in.ClientID, held.RegistrationID)
		}
		return ltidomain.Registration{}, err
	}
	return added, nil
}

// reserve reserves (issuer, clientID) for held's registration. A pair held
// by a reservation that no workspace lists, and older than
// reservationGrace, is taken over.
func (r registrationWriter) reserve(ctx context.Context, issuer, clientID string, held domain.LTIReservation) error {
	err := r.ws.ReservePair(ctx, issuer, clientID, held)
	if !errors.Is(err, ltidomain.ErrRegistrationTaken) {
		return wrapReserve(err)
	}
	holder, err := r.ws.Reservation(ctx, issuer, clientID)
	switch {
	case errors.Is(err, domain.ErrNotFound):
		// Released meanwhile: try once more.
	case err != nil:
		return fmt.Errorf("read the LTI reservation: %w", err)
	default:
		stale, err := r.stale(ctx, holder)
		if err != nil {
			return err
		}
		if !stale {
			return ltidomain.ErrRegistrationTaken
		}
		if err := r.ws.ReleasePair(ctx, issuer, clientID, holder.RegistrationID); err != nil {
			return fmt.Errorf("release a leftover LTI reservation: %w", err)
		}
	}
	return wrapReserve(r.ws.ReservePair(ctx, issuer, clientID, held))
}

// stale reports whether a reservation is a leftover: past the grace
// period, and its registration listed by no workspace (a deleted
// workspace's registrations still hold their pairs).
func (r registrationWriter) stale(ctx context.Context, held domain.LTIReservation) (bool, error) {
	if r.s.Now().Sub(held.CreatedAt) < reservationGrace {
		return false, nil
	}
	w, err := r.ws.Get(ctx, held.WorkspaceID)
	if errors.Is(err, domain.ErrNotFound) {
		return true, nil
	}
	if err != nil {
		return false, fmt.Errorf("get the workspace of an LTI reservation: %w", err)
	}
	_, listed := w.LTIRegistrations().Get(held.RegistrationID)
	return !listed, nil
}

// release releases a reservation whose registration was not (or is no
// longer) listed. A failure is logged, not answered: the reservation is
// then a leftover, which a later registration of the pair takes over.
func (r registrationWriter) release(ctx context.Context, issuer, clientID, registrationID string) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	if err := r.ws.ReleasePair(ctx, issuer, clientID, registrationID); err != nil {
		r.s.Logger.Warn("an LTI reservation was left behind; a later registration of the pair takes it over",
			"registration", registrationID, "error", err.Error())
	}
}

// refused reports whether err is an answer that certainly stored nothing: a
// rule, a missing workspace, or lost races. Anything else (an unreachable
// store, a failed publish of a stored change) may have stored the change.
func refused(err error) bool {
	switch fault.KindOf(err) {
	case fault.Invalid, fault.NotFound, fault.Conflict, fault.FailedPrecondition, fault.PreconditionFailed,
		fault.Aborted, fault.PermissionDenied:
		return true
	}
	return false
}

func wrapReserve(err error) error {
	if err == nil || errors.Is(err, ltidomain.ErrRegistrationTaken) {
		return err
	}
	return fmt.Errorf("reserve the LTI registration: %w", err)
}
