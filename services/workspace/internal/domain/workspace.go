// Package domain holds the workspace entity, its invariants, the repository
// it is stored through, and the errors it answers with. It imports only the
// standard library and the shared fault kinds and identifier rules.
package domain

import (
	"slices"
	"strings"
	"time"
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
// created, and changed by an update.
type Details struct {
	Name               string
	Type               Type
	ParentID           string   // empty: no parent
	Address            Address  // any part may be empty
	Products           []string // bank ids, <publisher>/<bank>
	ObjectiveDocuments []string // <authority>#<set>#<subject>:<year>
}

// Changes are what an update sets; a nil field is left as it is.
type Changes struct {
	Name               *string
	Type               *Type
	ParentID           *string // "" clears the parent
	Address            *Address
	Products           *[]string
	ObjectiveDocuments *[]string
}

// Tag is a typed label on a workspace or a key pair.
type Tag struct {
	Key   string
	Type  string
	Value string
}

// Workspace is an organization's container for content, members and keys.
//
// Managers is what makes tenancy cheap to check: the workspace that created
// this one, then that workspace's own managers, nearest first. It is fixed at
// creation, so "C manages W" is one membership test and "everything C
// manages" is one equality query on the array.
type Workspace struct {
	ID                 string
	Name               string
	Type               Type
	ParentID           string // empty: no parent
	Address            Address
	Products           []string // bank ids, <publisher>/<bank>
	ObjectiveDocuments []string
	Tags               []Tag
	SupportToolID      string

	CreatedBy string   // empty only for the bootstrap workspace
	Managers  []string // CreatedBy, then its managers, nearest first

	Keys              []KeyPair
	RegistrationCodes []string

	// CreateFingerprint identifies the create request that made this
	// workspace, so an identical retry can be told from a different body.
	CreateFingerprint string

	CreatedAt time.Time
	UpdatedAt time.Time
	DeletedAt time.Time // zero while active
	// TokenCutoff: SDK tokens issued at or before it are dead. A delete
	// sets it, and so does an undelete, so no token issued before or
	// during a deletion comes back.
	TokenCutoff time.Time

	// Revision counts stored changes; it is the workspace's etag and the
	// guard of optimistic concurrency.
	Revision int64
}

// Deleted reports whether the workspace is soft-deleted.
func (w *Workspace) Deleted() bool { return !w.DeletedAt.IsZero() }

// ManagedBy reports whether callerID manages w: created it, or manages the
// workspace that did.
func (w *Workspace) ManagedBy(callerID string) bool {
	return slices.Contains(w.Managers, callerID)
}

// VisibleTo reports whether callerID may see w: it is the caller's own
// workspace or one the caller manages.
func (w *Workspace) VisibleTo(callerID string) bool {
	return w.ID == callerID || w.ManagedBy(callerID)
}

// HoldsProduct reports whether bankID is shared with w.
func (w *Workspace) HoldsProduct(bankID string) bool {
	return slices.Contains(w.Products, bankID)
}

// NameKey is the sort and search key of a name: lists are ordered by it, then
// by id, and searched by substring within it.
func NameKey(name string) string { return strings.ToLower(name) }

// ManagersOfChildOf returns the Managers of a workspace created by creator.
func ManagersOfChildOf(creator *Workspace) []string {
	managers := make([]string, 0, len(creator.Managers)+1)
	managers = append(managers, creator.ID)
	return append(managers, creator.Managers...)
}

// KeyByAppKey returns the key pair with the given app key.
func (w *Workspace) KeyByAppKey(appKey string) (KeyPair, bool) {
	for _, k := range w.Keys {
		if k.AppKey == appKey {
			return k, true
		}
	}
	return KeyPair{}, false
}

// KeyByRole returns the first key pair with the given role.
func (w *Workspace) KeyByRole(role KeyRole) (KeyPair, bool) {
	for _, k := range w.Keys {
		if k.Role == role {
			return k, true
		}
	}
	return KeyPair{}, false
}
