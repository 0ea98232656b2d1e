package domain

import (
	"time"

	ltidomain "github.com/liveproctor/workspaces/services/workspace/internal/lti/domain"
)

// What the workspace holds for LTI: its LTI key pair, which 1.1 launches
// are signed with, and its LTI 1.3 registrations. The registrations' rules
// are the LTI context's (ltidomain.Registrations); the workspace adds what
// only it knows: that a deleted workspace changes nothing, and the events
// its document records with each change.

// LTIKey returns the LTI key pair with the consumer key, for a launch: the
// workspace must be active and the pair made for LTI (no API access).
func (w *Workspace) LTIKey(consumerKey string, now time.Time) (KeyPair, error) {
	k, ok := w.ActiveKey(consumerKey, now)
	switch {
	case !ok:
		return KeyPair{}, ltidomain.ErrLaunchUnknownKey
	case k.Role != RoleLTI || k.HasRESTAccess():
		return KeyPair{}, ltidomain.ErrLaunchNotLTIKey
	case w.Deleted():
		return KeyPair{}, ltidomain.ErrLaunchWorkspaceDeleted
	}
	return k, nil
}

// LTIRegistrations are the LTI 1.3 platforms the workspace is registered
// with, to read; they change through the methods below.
func (w *Workspace) LTIRegistrations() ltidomain.Registrations { return w.ltiRegistrations }

// AddLTIRegistration adds the registration r with the id given (the
// caller reserved its (issuer, client id) pair for it) and returns it.
func (w *Workspace) AddLTIRegistration(id string, r ltidomain.NewRegistration, urls ltidomain.URLPolicy, now time.Time) (ltidomain.Registration, error) {
	if w.Deleted() {
		return ltidomain.Registration{}, ErrDeleted
	}
	reg, err := w.ltiRegistrations.Add(id, r, urls, now)
	if err != nil {
		return ltidomain.Registration{}, err
	}
	w.record(EventLTIRegistrationCreated, ltiTarget(id), now, nil)
	return reg, nil
}

// RemoveLTIRegistration removes the registration id and returns it.
func (w *Workspace) RemoveLTIRegistration(id string, now time.Time) (ltidomain.Registration, error) {
	if w.Deleted() {
		return ltidomain.Registration{}, ErrDeleted
	}
	removed, err := w.ltiRegistrations.Remove(id)
	if err != nil {
		return ltidomain.Registration{}, err
	}
	w.record(EventLTIRegistrationDeleted, ltiTarget(id), now, nil)
	return removed, nil
}

// AddLTIDeployment adds deploymentID to the registration id and returns it;
// added is false when it was there already (nothing changed).
func (w *Workspace) AddLTIDeployment(id, deploymentID string, now time.Time) (r ltidomain.Registration, added bool, err error) {
	if w.Deleted() {
		return ltidomain.Registration{}, false, ErrDeleted
	}
	r, added, err = w.ltiRegistrations.AddDeployment(id, deploymentID, now)
	if added {
		w.record(EventLTIDeploymentAdded, ltiTarget(id), now, []string{"deploymentIds"})
	}
	return r, added, err
}

// RemoveLTIDeployment removes deploymentID from the registration id and
// returns the registration as it now is.
func (w *Workspace) RemoveLTIDeployment(id, deploymentID string, now time.Time) (ltidomain.Registration, error) {
	if w.Deleted() {
		return ltidomain.Registration{}, ErrDeleted
	}
	r, err := w.ltiRegistrations.RemoveDeployment(id, deploymentID, now)
	if err != nil {
		return ltidomain.Registration{}, err
	}
	w.record(EventLTIDeploymentRemoved, ltiTarget(id), now, []string{"deploymentIds"})
	return r, nil
}

// ltiTarget is a registration as the target of an event.
func ltiTarget(id string) Target { return Target{Type: TargetLTIRegistration, ID: id} }
