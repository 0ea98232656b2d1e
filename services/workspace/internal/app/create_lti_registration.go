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

// ltiReservationGrace is how old a reservation of an (issuer, client id)
// pair that no workspace lists must be before another registration takes
// the pair over. A create reserves, then writes within its request's
// deadline (seconds); a reservation older than that and still unlisted was
// left by a create that failed or a delete that stopped before releasing
// it. Younger ones may be a create in flight: the pair is taken.
const ltiReservationGrace = 5 * time.Minute

// CreateLTIRegistration registers an LTI 1.3 platform with a workspace the
// caller owns or manages (the rule of its key pairs): the pair is reserved
// store-wide first, then listed by the workspace's revision-checked write.
func (a *App) CreateLTIRegistration(ctx context.Context, caller domain.Caller, id string, in ltidomain.NewRegistration) (ltidomain.Registration, error) {
	if err := ltidomain.CheckNewRegistration(in, a.settings.LTIURLs); err != nil {
		return ltidomain.Registration{}, err
	}
	current, err := a.keyManaged(ctx, caller, id)
	if err != nil {
		return ltidomain.Registration{}, err
	}
	return a.addLTIRegistration(ctx, by(caller), current, func() (*domain.Workspace, error) { return a.keyManaged(ctx, caller, id) }, in, nil)
}

// addLTIRegistration adds the registration in to the workspace current, as
// who: the pair is reserved store-wide first, then listed by a
// revision-checked write of the workspace (read again by reread on a lost
// race), in which note, when given, records more about the change.
func (a *App) addLTIRegistration(ctx context.Context, who author, current *domain.Workspace, reread func() (*domain.Workspace, error),
	in ltidomain.NewRegistration, note func(w *domain.Workspace, now time.Time)) (ltidomain.Registration, error) {
	if err := current.LTIRegistrations().CanAdd(in.Issuer, in.ClientID); err != nil {
		return ltidomain.Registration{}, err
	}
	id := current.ID()
	held := domain.LTIReservation{WorkspaceID: id, RegistrationID: ident.NewUUID(), CreatedAt: a.timestamp()}
	if err := a.reserveLTIPair(ctx, in.Issuer, in.ClientID, held); err != nil {
		return ltidomain.Registration{}, err
	}
	var added ltidomain.Registration
	_, err := a.write(ctx, who, readFirst(current, reread), Precondition{},
		func(w *domain.Workspace) (bool, error) {
			now := a.timestamp()
			var err error
			if added, err = w.AddLTIRegistration(held.RegistrationID, in, a.settings.LTIURLs, now); err == nil && note != nil {
				note(w, now)
			}
			return err == nil, err
		})
	if err != nil {
		if refused(err) {
			a.releaseLTIPair(ctx, in.Issuer, in.ClientID, held.RegistrationID)
		}
		return ltidomain.Registration{}, err
	}
	return added, nil
}

// reserveLTIPair reserves (issuer, clientID) for held's registration. A
// pair held by a reservation that no workspace lists, and older than
// ltiReservationGrace, is taken over.
func (a *App) reserveLTIPair(ctx context.Context, issuer, clientID string, held domain.LTIReservation) error {
	err := a.repo.ReserveLTIRegistration(ctx, issuer, clientID, held)
	if !errors.Is(err, ltidomain.ErrRegistrationTaken) {
		return wrapReserve(err)
	}
	holder, err := a.repo.LTIReservation(ctx, issuer, clientID)
	switch {
	case errors.Is(err, domain.ErrNotFound):
		// Released meanwhile: try once more.
	case err != nil:
		return fmt.Errorf("read the LTI reservation: %w", err)
	default:
		stale, err := a.ltiReservationStale(ctx, holder)
		if err != nil {
			return err
		}
		if !stale {
			return ltidomain.ErrRegistrationTaken
		}
		if err := a.repo.ReleaseLTIRegistration(ctx, issuer, clientID, holder.RegistrationID); err != nil {
			return fmt.Errorf("release a leftover LTI reservation: %w", err)
		}
	}
	return wrapReserve(a.repo.ReserveLTIRegistration(ctx, issuer, clientID, held))
}

// ltiReservationStale reports whether a reservation is a leftover: past the
// grace period, and its registration listed by no workspace (a deleted
// workspace's registrations still hold their pairs).
func (a *App) ltiReservationStale(ctx context.Context, held domain.LTIReservation) (bool, error) {
	if a.now().Sub(held.CreatedAt) < ltiReservationGrace {
		return false, nil
	}
	w, err := a.repo.Get(ctx, held.WorkspaceID)
	if errors.Is(err, domain.ErrNotFound) {
		return true, nil
	}
	if err != nil {
		return false, fmt.Errorf("get the workspace of an LTI reservation: %w", err)
	}
	_, listed := w.LTIRegistrations().Get(held.RegistrationID)
	return !listed, nil
}

// releaseLTIPair releases a reservation whose registration was not (or is
// no longer) listed. A failure is logged, not answered: the reservation is
// then a leftover, which a later registration of the pair takes over.
func (a *App) releaseLTIPair(ctx context.Context, issuer, clientID, registrationID string) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	if err := a.repo.ReleaseLTIRegistration(ctx, issuer, clientID, registrationID); err != nil {
		a.logger.Warn("an LTI reservation was left behind; a later registration of the pair takes it over",
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
