// Package domain holds the workspace entity, its invariants, the repository
// it is stored through, and the errors it answers with. Besides the
// standard library it imports only the error kinds every component shares
// (pkg/fault), through which a domain error reaches callers by one table,
// the workspace id rule the auth service checks too (pkg/ident), the LTI
// context's domain (lti/domain), whose registrations the workspace document
// holds and whose launch errors its LTI key pair answers with, and the
// webhook context's domain (webhook/domain), whose endpoints it holds.
package domain

import (
	"slices"
	"strings"
	"time"

	"github.com/liveproctor/workspaces/pkg/fault"
	ltidomain "github.com/liveproctor/workspaces/services/workspace/internal/lti/domain"
	webhookdomain "github.com/liveproctor/workspaces/services/workspace/internal/webhook/domain"
)

// SchemaVersion is the date of the stored record's shape, returned to
// callers as schemaVersion. Change it when the shape changes.
const SchemaVersion = "2026-11-22"

// Type is the kind of organization a workspace belongs to.
type Type string

const (
	TypeDistrict Type = "DISTRICT"
	TypeCampus   Type = "CAMPUS"
)

// Types lists every valid Type, in the order error messages name them.
var Types = []Type{TypeDistrict, TypeCampus}

// Address is where the organization is. State is ISO 3166-2 (US-CA) and
// Country ISO 3166-1 alpha-2 (US); either may be empty.
type Address struct {
	City    string
	State   string
	Country string
}

// Details are what a workspace's managers choose for it: set when it is
// created, and changed by Update.
type Details struct {
	Name               string
	Type               Type
	ParentID           string   // empty: no parent
	Address            Address  // any part may be empty
	Products           []string // bank ids, <publisher>/<bank>
	ObjectiveDocuments []string // <authority>#<set>#<subject>:<year>
	// RateLimit is the workspace's own limit for each of its key pairs;
	// nil: the service's default.
	RateLimit *RateLimit
}

// RateLimit is a limit for each key pair of a workspace: PerSecond requests
// a second on average, up to Burst at once.
type RateLimit struct {
	PerSecond int
	Burst     int
}

func (d Details) clone() Details {
	d.Products = slices.Clone(d.Products)
	d.ObjectiveDocuments = slices.Clone(d.ObjectiveDocuments)
	if d.RateLimit != nil {
		r := *d.RateLimit
		d.RateLimit = &r
	}
	return d
}

// Changes are what an update sets; a nil field is left as it is.
//
// A list (Products, ObjectiveDocuments) is replaced whole, and an empty one
// clears it. That is the one way to clear a list on either transport: over
// gRPC the update_mask names the field and the request holds none of it
// (protobuf cannot tell an empty list from an unset one); over REST the body
// sends [] and the gateway names the field in the mask. REST refuses null
// for a list (restrules.Nullable): null is not a list, and serialisers write
// it for fields they were not given, which must not wipe them.
type Changes struct {
	Name               *string
	Type               *Type
	ParentID           *string // "" clears the parent
	Address            *Address
	Products           *[]string
	ObjectiveDocuments *[]string
	RateLimit          *RateLimit
	RemoveRateLimit    bool // back to the service's default
}

// Tag is a typed label on a workspace or a key pair.
type Tag struct {
	Key   string
	Type  string
	Value string
}

var (
	// ErrDeleted: a deleted workspace changes only by Undelete.
	ErrDeleted   = fault.New(fault.NotFound, "the workspace is deleted")
	errOwnParent = fault.InvalidField("parent", "a workspace cannot be its own parent")
)

// Workspace is an organization's container for content, members and keys.
// It changes only through its methods, which keep its rules; a store loads
// it with UnmarshalWorkspaceFromDatabase.
//
// Managers is what makes tenancy cheap to check: the workspace that created
// this one, then that workspace's own managers, nearest first. It is fixed at
// creation, so "C manages W" is one membership test and "everything C
// manages" is one equality query on the array.
type Workspace struct {
	id            string
	details       Details
	tags          []Tag
	supportToolID string

	createdBy string   // empty only for the root workspace
	managers  []string // createdBy, then its managers, nearest first

	keys              []KeyPair
	registrationCodes []string
	// ltiRegistrations are the LTI 1.3 platforms the workspace is
	// registered with (lti.go).
	ltiRegistrations ltidomain.Registrations
	// webhooks are the endpoints its audit trail is delivered to
	// (webhook.go).
	webhooks webhookdomain.Endpoints

	// createFingerprint identifies the create request that made this
	// workspace, so an identical retry can be told from a different body.
	createFingerprint string

	createdAt time.Time
	updatedAt time.Time
	deletedAt time.Time // zero while active
	// tokenCutoff: SDK tokens issued at or before it are dead. A delete
	// sets it, and so does an undelete, so no token issued before or
	// during a deletion comes back.
	tokenCutoff time.Time

	// revision counts stored changes; it is the workspace's etag and the
	// guard of optimistic concurrency. Zero until the workspace is stored.
	revision int64

	// outbox holds the events of the changes made since the workspace was
	// loaded (or built); the store writes them with the change.
	outbox []Event
}

// Credentials are what a new workspace is reached by: its server and LTI
// app keys with their secrets sealed, and the code members join it with.
type Credentials struct {
	Server           SealedKey
	LTI              SealedKey
	RegistrationCode string
}

// NewWorkspace returns a workspace that creator creates, and so manages
// with everything that manages creator: one with a server key pair that may
// call the API, an LTI key pair that may not, and one registration code. It
// answers an error naming every field of id and d that breaks a rule.
// fingerprint identifies the create request.
func NewWorkspace(id string, d Details, creator *Workspace, creds Credentials, fingerprint string, now time.Time) (*Workspace, error) {
	d, err := checkNew(id, d)
	if err != nil {
		return nil, err
	}
	w := &Workspace{
		id:                id,
		details:           d.clone(),
		createdBy:         creator.id,
		managers:          append([]string{creator.id}, creator.managers...),
		keys:              []KeyPair{NewKeyPair(RoleServer, creds.Server, now), NewKeyPair(RoleLTI, creds.LTI, now)},
		registrationCodes: []string{creds.RegistrationCode},
		createFingerprint: fingerprint,
		createdAt:         now,
		updatedAt:         now,
	}
	w.record(EventWorkspaceCreated, w.target(), now, nil)
	return w, nil
}

// checkNew applies the rules of a new workspace's id and details, one
// that names itself as its parent included.
func checkNew(id string, d Details) (Details, error) {
	d, err := CheckNewWorkspace(id, d)
	if err != nil {
		return Details{}, err
	}
	if d.ParentID == id {
		return Details{}, errOwnParent
	}
	return d, nil
}

// NewRootWorkspace returns the root workspace, which nothing created or
// manages, with its configured key pair; or an error naming every field of
// id and d that breaks a rule.
func NewRootWorkspace(id string, d Details, key SealedKey, now time.Time) (*Workspace, error) {
	d, err := checkNew(id, d)
	if err != nil {
		return nil, err
	}
	w := &Workspace{
		id:        id,
		details:   d.clone(),
		keys:      []KeyPair{NewKeyPair(RoleBootstrap, key, now)},
		createdAt: now,
		updatedAt: now,
	}
	w.record(EventWorkspaceBootstrapped, w.target(), now, nil)
	return w, nil
}

// target is the workspace as an event's target.
func (w *Workspace) target() Target { return Target{Type: TargetWorkspace, ID: w.id} }

// Update makes the changes c sets, or answers an error naming every field
// that breaks a rule. A deleted workspace is not updated.
func (w *Workspace) Update(c Changes, now time.Time) error {
	if w.Deleted() {
		return ErrDeleted
	}
	c, err := c.Check()
	if err != nil {
		return err
	}
	if c.ParentID != nil && *c.ParentID == w.id {
		return errOwnParent
	}
	before := w.details.clone()
	if c.Name != nil {
		w.details.Name = *c.Name
	}
	if c.Type != nil {
		w.details.Type = *c.Type
	}
	if c.ParentID != nil {
		w.details.ParentID = *c.ParentID
	}
	if c.Address != nil {
		w.details.Address = *c.Address
	}
	if c.Products != nil {
		w.details.Products = slices.Clone(*c.Products)
	}
	if c.ObjectiveDocuments != nil {
		w.details.ObjectiveDocuments = slices.Clone(*c.ObjectiveDocuments)
	}
	switch {
	case c.RemoveRateLimit:
		w.details.RateLimit = nil
	case c.RateLimit != nil:
		r := *c.RateLimit
		w.details.RateLimit = &r
	}
	w.updatedAt = now
	w.record(EventWorkspaceUpdated, w.target(), now, changedFields(before, w.details))
	return nil
}

// changedFields names, by their JSON names, the details that differ.
func changedFields(a, b Details) []string {
	changed := []string{}
	add := func(differ bool, field string) {
		if differ {
			changed = append(changed, field)
		}
	}
	add(a.Name != b.Name, "name")
	add(a.Type != b.Type, "type")
	add(a.ParentID != b.ParentID, "parentWorkspaceId")
	add(a.Address != b.Address, "address")
	add(!slices.Equal(a.Products, b.Products), "products")
	add(!slices.Equal(a.ObjectiveDocuments, b.ObjectiveDocuments), "objectiveDocuments")
	add((a.RateLimit == nil) != (b.RateLimit == nil) || a.RateLimit != nil && *a.RateLimit != *b.RateLimit, "rateLimit")
	return changed
}

// Delete soft-deletes the workspace: its key pairs stop authenticating and
// the SDK tokens issued until now die. The workspaces it manages stay,
// still managed by those above it.
func (w *Workspace) Delete(now time.Time) error {
	if w.Deleted() {
		return ErrDeleted
	}
	w.deletedAt, w.updatedAt, w.tokenCutoff = now, now, now
	w.record(EventWorkspaceDeleted, w.target(), now, nil)
	return nil
}

// Undelete restores a deleted workspace and reports whether it was
// deleted. Tokens issued before or during the deletion stay dead.
func (w *Workspace) Undelete(now time.Time) bool {
	if !w.Deleted() {
		return false
	}
	w.deletedAt = time.Time{}
	w.updatedAt, w.tokenCutoff = now, now
	w.record(EventWorkspaceUndeleted, w.target(), now, nil)
	return true
}

// Deleted reports whether the workspace is soft-deleted.
func (w *Workspace) Deleted() bool { return !w.deletedAt.IsZero() }

// ManagedBy reports whether callerID manages w: created it, or manages the
// workspace that did.
func (w *Workspace) ManagedBy(callerID string) bool {
	return slices.Contains(w.managers, callerID)
}

// VisibleTo reports whether callerID may see w: it is the caller's own
// workspace or one the caller manages.
func (w *Workspace) VisibleTo(callerID string) bool {
	return w.id == callerID || w.ManagedBy(callerID)
}

// HoldsProduct reports whether bankID is shared with w.
func (w *Workspace) HoldsProduct(bankID string) bool {
	return slices.Contains(w.details.Products, bankID)
}

// NameKey is the sort and search key of a name: lists are ordered by it, then
// by id, and searched by substring within it.
func NameKey(name string) string { return strings.ToLower(name) }

// The getters return copies, so nothing changes a workspace but its methods.

func (w *Workspace) ID() string                   { return w.id }
func (w *Workspace) Name() string                 { return w.details.Name }
func (w *Workspace) Type() Type                   { return w.details.Type }
func (w *Workspace) ParentID() string             { return w.details.ParentID }
func (w *Workspace) Address() Address             { return w.details.Address }
func (w *Workspace) Products() []string           { return slices.Clone(w.details.Products) }
func (w *Workspace) ObjectiveDocuments() []string { return slices.Clone(w.details.ObjectiveDocuments) }

// RateLimit returns the workspace's own limit for its key pairs; ok is
// false while the service's default applies.
func (w *Workspace) RateLimit() (r RateLimit, ok bool) {
	if w.details.RateLimit == nil {
		return RateLimit{}, false
	}
	return *w.details.RateLimit, true
}

func (w *Workspace) Tags() []Tag                 { return slices.Clone(w.tags) }
func (w *Workspace) SupportToolID() string       { return w.supportToolID }
func (w *Workspace) CreatedBy() string           { return w.createdBy }
func (w *Workspace) Managers() []string          { return slices.Clone(w.managers) }
func (w *Workspace) RegistrationCodes() []string { return slices.Clone(w.registrationCodes) }
func (w *Workspace) CreateFingerprint() string   { return w.createFingerprint }
func (w *Workspace) CreatedAt() time.Time        { return w.createdAt }
func (w *Workspace) UpdatedAt() time.Time        { return w.updatedAt }
func (w *Workspace) DeletedAt() time.Time        { return w.deletedAt } // zero while active
func (w *Workspace) TokenCutoff() time.Time      { return w.tokenCutoff }
func (w *Workspace) Revision() int64             { return w.revision }

// StoredWorkspace is a workspace as a store keeps it, for
// UnmarshalWorkspaceFromDatabase.
type StoredWorkspace struct {
	ID                 string
	Name               string
	Type               Type
	ParentID           string
	Address            Address
	Products           []string
	ObjectiveDocuments []string
	RateLimit          *RateLimit // nil: none of its own
	Tags               []Tag
	SupportToolID      string
	CreatedBy          string
	Managers           []string
	Keys               []KeyPair
	RegistrationCodes  []string
	LTIRegistrations   []ltidomain.Registration
	Webhooks           []webhookdomain.Endpoint
	CreateFingerprint  string
	CreatedAt          time.Time
	UpdatedAt          time.Time
	DeletedAt          time.Time
	TokenCutoff        time.Time
	Revision           int64
}

// UnmarshalWorkspaceFromDatabase returns the workspace a store kept. It is
// for stores loading what they stored, not a constructor: it checks
// nothing, so a workspace stays readable when rules tighten after it was
// written. The workspace takes s's slices as its own.
func UnmarshalWorkspaceFromDatabase(s StoredWorkspace) *Workspace {
	for i := range s.Keys {
		if s.Keys[i].Name == "" {
			s.Keys[i].Name = string(s.Keys[i].Role)
		}
	}
	return &Workspace{
		id: s.ID,
		details: Details{
			Name:               s.Name,
			Type:               s.Type,
			ParentID:           s.ParentID,
			Address:            s.Address,
			Products:           s.Products,
			ObjectiveDocuments: s.ObjectiveDocuments,
			RateLimit:          s.RateLimit,
		},
		tags:              s.Tags,
		supportToolID:     s.SupportToolID,
		createdBy:         s.CreatedBy,
		managers:          s.Managers,
		keys:              s.Keys,
		registrationCodes: s.RegistrationCodes,
		ltiRegistrations:  ltidomain.UnmarshalRegistrations(s.LTIRegistrations),
		webhooks:          webhookdomain.UnmarshalEndpoints(s.Webhooks),
		createFingerprint: s.CreateFingerprint,
		createdAt:         s.CreatedAt,
		updatedAt:         s.UpdatedAt,
		deletedAt:         s.DeletedAt,
		tokenCutoff:       s.TokenCutoff,
		revision:          s.Revision,
	}
}
