package domain

import (
	"crypto/rand"
	"encoding/binary"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"
)

// EventType names an administrative change in the audit trail.
type EventType string

// The audit trail's event types. Adding one is adding a constant here, to
// EventTypes, and a line in the entity method (or use case) that records it.
const (
	EventWorkspaceCreated      EventType = "workspace.created"
	EventWorkspaceUpdated      EventType = "workspace.updated"
	EventWorkspaceDeleted      EventType = "workspace.deleted"
	EventWorkspaceUndeleted    EventType = "workspace.undeleted"
	EventWorkspaceBootstrapped EventType = "workspace.bootstrapped"
	// EventWorkspaceSessionsRevoked: every SDK session of a workspace was
	// revoked (the auth service, when the workspace was deleted).
	EventWorkspaceSessionsRevoked EventType = "workspace.sdkSessionsRevoked"
	// EventUserSessionsRevoked: every SDK session of one user in a
	// workspace was revoked (POST /api/logout/sdk).
	EventUserSessionsRevoked EventType = "user.sdkSessionsRevoked"
	EventKeyPairCreated      EventType = "keyPair.created"
	EventKeyPairRotated      EventType = "keyPair.rotated"
	EventKeyPairRevoked      EventType = "keyPair.revoked"
	EventKeyPairExpired      EventType = "keyPair.expired"
	// The LTI 1.3 registrations' changes; a deployment's changedFields is
	// ["deploymentIds"].
	EventLTIRegistrationCreated EventType = "ltiRegistration.created"
	EventLTIRegistrationDeleted EventType = "ltiRegistration.deleted"
	EventLTIDeploymentAdded     EventType = "ltiRegistration.deploymentAdded"
	EventLTIDeploymentRemoved   EventType = "ltiRegistration.deploymentRemoved"
	// EventLTIRegistrationLinkCreated: an LTI Dynamic Registration link was
	// made; EventLTIRegistrationLinkUsed: a platform registered through it
	// (with the registration's EventLTIRegistrationCreated).
	EventLTIRegistrationLinkCreated EventType = "ltiRegistrationLink.created"
	EventLTIRegistrationLinkUsed    EventType = "ltiRegistrationLink.used"
	// A score for an LTI launch reached the platform's gradebook
	// (EventLTIScoreDelivered), or was given up on (EventLTIScoreFailed,
	// with its Reason).
	EventLTIScoreDelivered EventType = "ltiScore.delivered"
	EventLTIScoreFailed    EventType = "ltiScore.failed"
	// A link to the administrator's portal was made, opened (its session
	// started), or revoked (its session, if any, ended).
	EventPortalLinkCreated EventType = "portalLink.created"
	EventPortalLinkOpened  EventType = "portalLink.opened"
	EventPortalLinkRevoked EventType = "portalLink.revoked"
	// The webhook endpoints' changes: an update's changedFields names what
	// it changed; a rotation's the secret's overlap, in none. Delivery
	// records EventWebhookDisabled (with its Reason) when it turns an
	// endpoint off, and EventWebhookAttemptsExhausted (with the EventID it
	// never delivered) when it gives an event up.
	EventWebhookCreated           EventType = "webhook.created"
	EventWebhookUpdated           EventType = "webhook.updated"
	EventWebhookDeleted           EventType = "webhook.deleted"
	EventWebhookSecretRotated     EventType = "webhook.secretRotated"
	EventWebhookDisabled          EventType = "webhook.disabled"
	EventWebhookAttemptsExhausted EventType = "webhook.attemptsExhausted"
)

// EventWebhookTest is the type of a webhook's test message: an event made
// for the one delivery, never recorded, so it is not one of EventTypes.
const EventWebhookTest EventType = "webhook.test"

// EventTypes lists every event type, in the order documents name them.
var EventTypes = []EventType{
	EventWorkspaceCreated, EventWorkspaceUpdated, EventWorkspaceDeleted, EventWorkspaceUndeleted,
	EventWorkspaceBootstrapped, EventWorkspaceSessionsRevoked, EventUserSessionsRevoked,
	EventKeyPairCreated, EventKeyPairRotated, EventKeyPairRevoked, EventKeyPairExpired,
	EventLTIRegistrationCreated, EventLTIRegistrationDeleted, EventLTIDeploymentAdded, EventLTIDeploymentRemoved,
	EventLTIRegistrationLinkCreated, EventLTIRegistrationLinkUsed, EventLTIScoreDelivered, EventLTIScoreFailed,
	EventPortalLinkCreated, EventPortalLinkOpened, EventPortalLinkRevoked,
	EventWebhookCreated, EventWebhookUpdated, EventWebhookDeleted, EventWebhookSecretRotated,
	EventWebhookDisabled, EventWebhookAttemptsExhausted,
}

// Target types: what an event is about.
const (
	TargetWorkspace = "workspace"
	TargetUser      = "user"
	TargetKeyPair   = "keyPair"
	// TargetLTIRegistration: an LTI 1.3 registration, by its id.
	TargetLTIRegistration = "ltiRegistration"
	// TargetLTIRegistrationLink: an LTI Dynamic Registration link, by its
	// id (never the link's secret).
	TargetLTIRegistrationLink = "ltiRegistrationLink"
	// TargetLTIScore: a score for an LTI launch, by its id.
	TargetLTIScore = "ltiScore"
	// TargetWebhook: a webhook endpoint, by its id.
	TargetWebhook = "webhook"
	// TargetPortalLink: a link to the administrator's portal, by its id
	// (never the link's secret).
	TargetPortalLink = "portalLink"
)

// Actor is who made a change: a key pair of a workspace, an administrator
// in the portal (PortalLinkID: the link that started the session, with
// its workspace), or the service itself (System: the bootstrap from
// configuration, expiries).
type Actor struct {
	System       bool
	WorkspaceID  string
	AppKey       string
	PortalLinkID string
}

// SystemActor is the service acting on its own.
var SystemActor = Actor{System: true}

// Target is what an event is about: Type is one of the Target constants.
type Target struct {
	Type string
	ID   string
}

// Event is one administrative change. It never holds a secret or a digest
// of one.
//
// A change to a workspace records its events in the workspace itself (its
// outbox), stored by the same single-document write as the change; they are
// then published to the audit trail. Key is the change's deterministic key,
// <workspaceId>/<revision>/<n>, which makes publishing twice harmless; an
// event that rides on no workspace write has none, unless recording it
// again must be harmless too (<workspaceId>/portalLink/<linkId>/<type>). ID
// is the public, time-ordered id, assigned when the event is published.
type Event struct {
	ID          string
	Key         string
	Type        EventType
	OccurredAt  time.Time
	WorkspaceID string   // the workspace the event belongs to
	Managers    []string // that workspace's managers, for "events of what C manages"
	Actor       Actor
	Target      Target
	RequestID   string
	// ChangedFields names what an update changed, by JSON name.
	ChangedFields []string
	// Reason says why the change was made, where the type says there is
	// one (webhook.disabled, ltiScore.failed); empty otherwise.
	Reason string
	// EventID is another event the change is about (webhook.attemptsExhausted:
	// the event never delivered); empty otherwise.
	EventID string
}

// record adds an event about w to its outbox, keyed by the revision the
// next store of w will have, and returns it there, for what only some
// types carry.
func (w *Workspace) record(t EventType, target Target, now time.Time, changed []string) *Event {
	n := len(w.outbox)
	w.outbox = append(w.outbox, Event{
		Key:           fmt.Sprintf("%s/%d/%d", w.id, w.revision+1, n),
		Type:          t,
		OccurredAt:    now,
		WorkspaceID:   w.id,
		Managers:      slices.Clone(w.managers),
		Target:        target,
		ChangedFields: changed,
	})
	return &w.outbox[n]
}

// RecordChange adds an event about w to its outbox, for changes made
// outside the entity's own methods (key pairs): it is stored and published
// with w's next write.
func (w *Workspace) RecordChange(t EventType, target Target, now time.Time, changed []string) {
	w.record(t, target, now, slices.Clone(changed))
}

// Attribute names who made the changes w's outbox holds, and in which
// request, for those that do not say yet.
func (w *Workspace) Attribute(actor Actor, requestID string) {
	for i := range w.outbox {
		if w.outbox[i].Actor == (Actor{}) {
			w.outbox[i].Actor = actor
			w.outbox[i].RequestID = requestID
		}
	}
}

// PendingEvents returns the events recorded since w was loaded: a store
// writes them into the workspace's outbox together with the change.
func (w *Workspace) PendingEvents() []Event {
	out := slices.Clone(w.outbox)
	for i := range out {
		out[i].Managers = slices.Clone(out[i].Managers)
		out[i].ChangedFields = slices.Clone(out[i].ChangedFields)
	}
	return out
}

// NewEvent returns an event that rides on no workspace write (the auth
// service's revocations, which already happened elsewhere): it is stored
// straight into the audit trail. w is the workspace it belongs to.
func NewEvent(t EventType, w *Workspace, actor Actor, target Target, requestID string, now time.Time) Event {
	return Event{
		Type:        t,
		OccurredAt:  now,
		WorkspaceID: w.id,
		Managers:    slices.Clone(w.managers),
		Actor:       actor,
		Target:      target,
		RequestID:   requestID,
	}
}

// EventIDLength is the length of every event id: 12 hex digits of Unix
// milliseconds, then 16 of randomness.
const EventIDLength = 28

// EventIDSource makes event ids: they sort by time as strings (to the
// millisecond) and also in the order one source made them,
// within one millisecond and when the clock steps back, so the events of
// one change, published one after the other, keep their order. Safe for
// concurrent use.
type EventIDSource struct {
	mu       sync.Mutex
	lastMS   int64
	lastRand uint64
}

// Next returns an id for time t, greater than every id it returned before.
func (s *EventIDSource) Next(t time.Time) string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	ms, r := max(t.UnixMilli(), 0)&(1<<48-1), binary.BigEndian.Uint64(b[:])>>1 // room to count up
	s.mu.Lock()
	defer s.mu.Unlock()
	if ms < s.lastMS || ms == s.lastMS && r <= s.lastRand {
		ms, r = s.lastMS, s.lastRand+1
	}
	s.lastMS, s.lastRand = ms, r
	return fmt.Sprintf("%012x%016x", ms, r)
}

// EventIDFloor is the time prefix of ids made at t: every id made before
// t's millisecond sorts before it, every id made in it or later after it.
func EventIDFloor(t time.Time) string {
	ms := max(t.UnixMilli(), 0) & (1<<48 - 1)
	return fmt.Sprintf("%012x", ms)
}

// EventIDTime is the time an id was made, to the millisecond; ok is false
// for a string that is not an event id.
func EventIDTime(id string) (t time.Time, ok bool) {
	if len(id) != EventIDLength {
		return time.Time{}, false
	}
	var ms int64
	for _, c := range id[:12] {
		switch {
		case c >= '0' && c <= '9':
			ms = ms<<4 | int64(c-'0')
		case c >= 'a' && c <= 'f':
			ms = ms<<4 | int64(c-'a'+10)
		default:
			return time.Time{}, false
		}
	}
	for _, c := range id[12:] {
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return time.Time{}, false
		}
	}
	return time.UnixMilli(ms).UTC(), true
}

// EventQuery selects events of the audit trail, in id order.
type EventQuery struct {
	// WorkspaceID: the events of this workspace and, with IncludeManaged,
	// of every workspace it manages.
	WorkspaceID    string
	IncludeManaged bool
	// Types, when not empty, keeps events of these types.
	Types []EventType
	// After: only ids greater than this (empty: from the start).
	After string
	// Before: only ids less than this (the settle window's floor).
	Before string
	// Limit is the most events to return; at least 1.
	Limit int
}

// Matches reports whether e is selected by q (for in-memory stores).
func (q EventQuery) Matches(e Event) bool {
	switch {
	case e.WorkspaceID != q.WorkspaceID && !(q.IncludeManaged && slices.Contains(e.Managers, q.WorkspaceID)):
		return false
	case len(q.Types) > 0 && !slices.Contains(q.Types, e.Type):
		return false
	case e.ID <= q.After:
		return false
	case q.Before != "" && e.ID >= q.Before:
		return false
	}
	return true
}

// DefaultEventPageSize is an event list's page size when none is given.
const DefaultEventPageSize = 100

// CheckEventQuery checks an event list's type filter and page size, and
// returns the types and the page size to use (DefaultEventPageSize when none
// is given). Types are matched exactly; a repeated type counts once.
func CheckEventQuery(types []string, pageSize *int32) ([]EventType, int, error) {
	var v violations
	size := DefaultEventPageSize
	if pageSize != nil {
		size = checkPageSize(&v, pageSize)
	}
	if len(types) > len(EventTypes) {
		v.add("type", fmt.Sprintf("at most %d values", len(EventTypes)))
	}
	var out []EventType
	for i, t := range types {
		if i == len(EventTypes) {
			break
		}
		if !slices.Contains(EventTypes, EventType(t)) {
			v.add("type", "must be one of "+joinTypes())
			break
		}
		if !slices.Contains(out, EventType(t)) {
			out = append(out, EventType(t))
		}
	}
	slices.Sort(out)
	return out, size, v.err()
}

func joinTypes() string {
	s := make([]string, len(EventTypes))
	for i, t := range EventTypes {
		s[i] = string(t)
	}
	return strings.Join(s, ", ")
}
