package domain

import (
	"fmt"
	"slices"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/liveproctor/workspaces/pkg/fault"
	"github.com/liveproctor/workspaces/pkg/outbound"
)

// Bounds of a workspace's endpoints. They live in the workspace document,
// which every request reads, so their number is bounded, as LTI
// registrations' is.
const (
	MaxEndpoints         = 20
	MaxDescriptionLength = 256 // characters
)

// The overlap of a secret's rotation: how long the previous secret keeps
// signing beside the new one, so that receivers can change secrets
// without refusing a message.
const (
	DefaultSecretOverlap = 24 * time.Hour
	MaxSecretOverlap     = 7 * 24 * time.Hour
)

// Errors of the endpoint rules.
var (
	// ErrEndpointNotFound: the workspace has no such endpoint.
	ErrEndpointNotFound = fault.New(fault.NotFound, "webhook not found")
	// ErrTooManyEndpoints: a bound of the workspace document.
	ErrTooManyEndpoints = fault.New(fault.FailedPrecondition,
		"the workspace already has %d webhooks: delete one first", MaxEndpoints)
)

// Endpoint is one webhook endpoint of a workspace: where the events its
// filter admits are delivered, signed with its secret.
type Endpoint struct {
	ID          string
	URL         string
	Description string
	// EventTypes admits the events of these types; empty admits every
	// type.
	EventTypes []string
	Enabled    bool
	// DisabledReason says why delivery turned the endpoint off; empty
	// while it is on, and when a caller turned it off.
	DisabledReason string
	// EnabledAt is when the endpoint was created or last turned back on:
	// the live feed delivers the events recorded from then.
	EnabledAt time.Time
	CreatedAt time.Time
	UpdatedAt time.Time
	// SealedSecret is the signing secret, sealed by the service's secret
	// box and bound to the endpoint's id; SealedPreviousSecret the one it
	// replaced, which signs too until PreviousUntil (nil when there is
	// none).
	SealedSecret         []byte
	SealedPreviousSecret []byte
	PreviousUntil        time.Time
}

func (e Endpoint) clone() Endpoint {
	e.EventTypes = slices.Clone(e.EventTypes)
	e.SealedSecret = slices.Clone(e.SealedSecret)
	e.SealedPreviousSecret = slices.Clone(e.SealedPreviousSecret)
	return e
}

// SealedSecrets are the secrets that sign a message sent at now: the
// current one first, then the previous one while its overlap lasts.
func (e Endpoint) SealedSecrets(now time.Time) [][]byte {
	secrets := [][]byte{slices.Clone(e.SealedSecret)}
	if e.SealedPreviousSecret != nil && now.Before(e.PreviousUntil) {
		secrets = append(secrets, slices.Clone(e.SealedPreviousSecret))
	}
	return secrets
}

// NewEndpoint is what a caller sends for an endpoint.
type NewEndpoint struct {
	URL         string
	EventTypes  []string // empty: every type
	Description string
}

// Changes are what an update sets; a nil field is left as it is. An empty
// EventTypes admits every type again.
type Changes struct {
	URL         *string
	EventTypes  *[]string
	Description *string
	Enabled     *bool
}

// URLPolicy is the outbound rule an endpoint's URL is stored under.
type URLPolicy = outbound.Policy

// Rules are what an endpoint's fields are checked against, which the
// workspace side gives: the outbound rule of its URL, and the event types
// the audit trail publishes.
type Rules struct {
	URLs       URLPolicy
	EventTypes []string
}

// insecureHostsSetting is the setting a refusal of http names.
const insecureHostsSetting = "WEBHOOK_ALLOW_INSECURE_HOSTS"

// CheckNewEndpoint checks an endpoint's fields, naming every one that
// breaks a rule.
func CheckNewEndpoint(in NewEndpoint, r Rules) error {
	var v violations
	r.checkURL(&v, in.URL)
	r.checkEventTypes(&v, in.EventTypes)
	checkDescription(&v, in.Description)
	return v.err()
}

// Check checks the fields c sets, naming every one that breaks a rule.
func (c Changes) Check(r Rules) error {
	var v violations
	if c.URL != nil {
		r.checkURL(&v, *c.URL)
	}
	if c.EventTypes != nil {
		r.checkEventTypes(&v, *c.EventTypes)
	}
	if c.Description != nil {
		checkDescription(&v, *c.Description)
	}
	return v.err()
}

// checkURL: the rule of a stored URL (https on a public host, but for the
// hosts WEBHOOK_ALLOW_INSECURE_HOSTS names), query allowed.
func (r Rules) checkURL(v *violations, raw string) {
	if why := r.URLs.StoredURLProblem(raw, outbound.AnyURL, insecureHostsSetting); why != "" {
		v.add("url", why)
	}
}

// checkEventTypes: each a published type, no two alike.
func (r Rules) checkEventTypes(v *violations, types []string) {
	if len(types) > len(r.EventTypes) {
		v.add("eventTypes", fmt.Sprintf("must have at most %d elements", len(r.EventTypes)))
		return
	}
	first := map[string]int{}
	for i, t := range types {
		field := fmt.Sprintf("eventTypes[%d]", i)
		switch j, dup := first[t]; {
		case dup:
			v.add(field, fmt.Sprintf("duplicate of eventTypes[%d]", j))
		case !slices.Contains(r.EventTypes, t):
			v.add(field, "must be one of "+strings.Join(r.EventTypes, ", "))
		default:
			first[t] = i
		}
	}
}

// checkDescription: at most MaxDescriptionLength characters, none of them
// a control character. It may be empty.
func checkDescription(v *violations, d string) {
	switch {
	case utf8.RuneCountInString(d) > MaxDescriptionLength:
		v.add("description", fmt.Sprintf("must be at most %d characters", MaxDescriptionLength))
	case strings.ContainsFunc(d, unicode.IsControl):
		v.add("description", "must not contain control characters")
	}
}

// CheckSecretOverlap checks how long a rotated secret keeps signing.
func CheckSecretOverlap(d time.Duration) error {
	if d < 0 || d > MaxSecretOverlap {
		return fault.InvalidField("overlap", fmt.Sprintf("must be between 0s and %ds (7 days)", int64(MaxSecretOverlap/time.Second)))
	}
	return nil
}

// Endpoints are a workspace's endpoints, oldest first, with the rules they
// keep: the workspace document holds them (and records the events of
// their changes), this package says what a change may be. A change copies
// what it touches, so copies of an Endpoints never share anything one of
// them changes.
type Endpoints struct {
	list []Endpoint
}

// UnmarshalEndpoints returns the endpoints a store kept, unchecked (as a
// workspace is loaded); it takes list as its own.
func UnmarshalEndpoints(list []Endpoint) Endpoints {
	return Endpoints{list: list}
}

// Len is how many endpoints there are.
func (es Endpoints) Len() int { return len(es.list) }

// All returns copies of the endpoints, oldest first.
func (es Endpoints) All() []Endpoint {
	out := make([]Endpoint, len(es.list))
	for i, e := range es.list {
		out[i] = e.clone()
	}
	return out
}

// Get returns the endpoint id.
func (es Endpoints) Get(id string) (Endpoint, bool) {
	i := es.index(id)
	if i < 0 {
		return Endpoint{}, false
	}
	return es.list[i].clone(), true
}

// CanAdd reports why an endpoint cannot be added: there are MaxEndpoints.
func (es Endpoints) CanAdd() error {
	if len(es.list) >= MaxEndpoints {
		return ErrTooManyEndpoints
	}
	return nil
}

// Add adds the endpoint in, enabled, with the id given and its secret
// sealed for that id, and returns it.
func (es *Endpoints) Add(id string, in NewEndpoint, sealedSecret []byte, r Rules, now time.Time) (Endpoint, error) {
	if err := CheckNewEndpoint(in, r); err != nil {
		return Endpoint{}, err
	}
	if err := es.CanAdd(); err != nil {
		return Endpoint{}, err
	}
	e := Endpoint{
		ID:           id,
		URL:          in.URL,
		Description:  in.Description,
		EventTypes:   slices.Clone(in.EventTypes),
		Enabled:      true,
		EnabledAt:    now,
		CreatedAt:    now,
		UpdatedAt:    now,
		SealedSecret: slices.Clone(sealedSecret),
	}
	if e.EventTypes == nil {
		e.EventTypes = []string{}
	}
	es.list = append(slices.Clone(es.list), e)
	return e.clone(), nil
}

// Update makes the changes c sets to the endpoint id, and returns it and
// the fields that changed, by JSON name (none: nothing changed, and
// nothing was touched). Turning it back on starts its live feed anew
// (EnabledAt) and clears the reason it was turned off.
func (es *Endpoints) Update(id string, c Changes, r Rules, now time.Time) (Endpoint, []string, error) {
	if err := c.Check(r); err != nil {
		return Endpoint{}, nil, err
	}
	i := es.index(id)
	if i < 0 {
		return Endpoint{}, nil, ErrEndpointNotFound
	}
	e := es.list[i].clone()
	var changed []string
	if c.URL != nil && *c.URL != e.URL {
		e.URL = *c.URL
		changed = append(changed, "url")
	}
	if c.EventTypes != nil && !slices.Equal(*c.EventTypes, e.EventTypes) {
		e.EventTypes = append([]string{}, *c.EventTypes...)
		changed = append(changed, "eventTypes")
	}
	if c.Description != nil && *c.Description != e.Description {
		e.Description = *c.Description
		changed = append(changed, "description")
	}
	if c.Enabled != nil && *c.Enabled != e.Enabled {
		e.Enabled, e.DisabledReason = *c.Enabled, ""
		if e.Enabled {
			e.EnabledAt = now
		}
		changed = append(changed, "enabled")
	}
	if len(changed) == 0 {
		return e, nil, nil
	}
	e.UpdatedAt = now
	es.set(i, e)
	return e.clone(), changed, nil
}

// Remove removes the endpoint id and returns it.
func (es *Endpoints) Remove(id string) (Endpoint, error) {
	i := es.index(id)
	if i < 0 {
		return Endpoint{}, ErrEndpointNotFound
	}
	removed := es.list[i]
	es.list = slices.Delete(slices.Clone(es.list), i, i+1)
	return removed, nil
}

// RotateSecret makes sealedSecret (sealed for the endpoint's id) the
// endpoint's secret; the one it replaces keeps signing beside it for
// overlap (0 to MaxSecretOverlap). Only one previous secret is kept: a
// rotation within the overlap of the one before drops the older previous
// secret at once.
func (es *Endpoints) RotateSecret(id string, sealedSecret []byte, overlap time.Duration, now time.Time) (Endpoint, error) {
	if err := CheckSecretOverlap(overlap); err != nil {
		return Endpoint{}, err
	}
	i := es.index(id)
	if i < 0 {
		return Endpoint{}, ErrEndpointNotFound
	}
	e := es.list[i].clone()
	e.SealedPreviousSecret, e.PreviousUntil = e.SealedSecret, now.Add(overlap)
	if overlap == 0 {
		e.SealedPreviousSecret = nil
	}
	e.SealedSecret = slices.Clone(sealedSecret)
	e.UpdatedAt = now
	es.set(i, e)
	return e.clone(), nil
}

// Disable turns the endpoint id off for reason, and reports whether it
// was on (an endpoint already off is left as it is).
func (es *Endpoints) Disable(id, reason string, now time.Time) (bool, error) {
	i := es.index(id)
	if i < 0 {
		return false, ErrEndpointNotFound
	}
	e := es.list[i].clone()
	if !e.Enabled {
		return false, nil
	}
	e.Enabled, e.DisabledReason, e.UpdatedAt = false, reason, now
	es.set(i, e)
	return true, nil
}

// set replaces endpoint i with e, on a copy of the list.
func (es *Endpoints) set(i int, e Endpoint) {
	es.list = slices.Clone(es.list)
	es.list[i] = e
}

// index is the index of endpoint id, or -1.
func (es Endpoints) index(id string) int {
	return slices.IndexFunc(es.list, func(e Endpoint) bool { return e.ID == id })
}

// violations collects the fields a check refuses, as the other domains'
// checks do.
type violations []fault.FieldViolation

func (v *violations) add(field, description string) {
	*v = append(*v, fault.FieldViolation{Field: field, Description: description})
}

// err returns nil when nothing was recorded, else a fault.Invalid error.
func (v violations) err() error { return fault.InvalidFields(v) }
