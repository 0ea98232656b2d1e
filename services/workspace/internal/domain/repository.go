package domain

import (
	"cmp"
	"context"
	"slices"
	"strings"
	"time"

	"github.com/liveproctor/workspaces/pkg/fault"
)

// Errors a Repository answers with. Implementations return these (wrapped or
// not) and nothing driver-specific; a store that cannot be reached is a
// fault.Unavailable error.
var (
	ErrNotFound = fault.New(fault.NotFound, "workspace not found")
	// ErrIDTaken: a workspace with this id exists (active or deleted).
	ErrIDTaken = fault.New(fault.Conflict, "a workspace with this id already exists")
	// ErrAppKeyTaken / ErrCodeTaken: a generated app key or registration code
	// is already in use; the caller generates another and retries.
	ErrAppKeyTaken = fault.New(fault.Conflict, "app key already in use")
	ErrCodeTaken   = fault.New(fault.Conflict, "registration code already in use")
	// ltidomain.ErrLTIRegistrationTaken is what ReserveLTIRegistration
	// answers for a pair reserved already.
	// ErrRevisionChanged: the stored revision is no longer the one read.
	ErrRevisionChanged = fault.New(fault.PreconditionFailed, "the workspace was changed by another request")
)

// Repository stores workspaces.
//
// Create must leave either the whole workspace (document, key pairs,
// registration codes) or nothing a caller can use: app keys and codes are
// unique store-wide, and a failure part-way leaves at most reservations that
// no workspace refers to.
type Repository interface {
	// Create stores a new workspace at revision 1.
	Create(ctx context.Context, w *Workspace) error
	// Get returns the workspace with the id, soft-deleted or not.
	Get(ctx context.Context, id string) (*Workspace, error)
	// GetMany returns, by id, those of the workspaces with the ids that
	// exist, soft-deleted or not, in one read.
	GetMany(ctx context.Context, ids ...string) (map[string]*Workspace, error)
	// GetByAppKey returns the workspace owning the app key, soft-deleted or not.
	GetByAppKey(ctx context.Context, appKey string) (*Workspace, error)
	// List returns the first q.Limit workspaces q selects (ListQuery.Selects),
	// in list order.
	List(ctx context.Context, q ListQuery) ([]*Workspace, error)
	// Update stores w's mutable fields (name, type, parent, address,
	// products, objective documents, key pairs, LTI registrations, updated,
	// deleted and token cutoff times) if the stored revision is still w.Revision(), and
	// returns w as it now is: at the next revision. Otherwise it returns
	// ErrRevisionChanged: of concurrent Updates from one revision, exactly
	// one succeeds. The events w recorded are stored with the change, in
	// the same write. Every change of key pairs goes through it, so
	// concurrent changes cannot lose a pair. A new pair's app key must be
	// reserved (ReserveAppKey) before the Update that lists it.
	Update(ctx context.Context, w *Workspace) (*Workspace, error)
	// ReserveAppKey claims appKey for workspaceID, store-wide and for good:
	// a key once reserved is never reserved again, even after its pair is
	// revoked (GetByAppKey then finds no owner). ErrAppKeyTaken when it
	// is reserved already.
	ReserveAppKey(ctx context.Context, workspaceID, appKey string) error
	// RetireAppKeys marks the reservations of appKeys as retired: their
	// pairs are being revoked or have expired, and must never be added
	// back. It is called before the write that removes the pairs, so a
	// crash in between leaves a retired key still listed (harmless: it is
	// only consulted for keys a workspace no longer lists), never a removed
	// key that looks unfinished.
	RetireAppKeys(ctx context.Context, appKeys []string) error
	// AppKeyReservation returns who reserved appKey and whether it was
	// retired; ErrNotFound when it was never reserved.
	AppKeyReservation(ctx context.Context, appKey string) (AppKeyReservation, error)
	// RecordKeyUse notes that appKey was used at. It is called at most once
	// per pair per KeyUseGranularity per replica, off the request's path.
	RecordKeyUse(ctx context.Context, appKey string, at time.Time) error
	// KeysLastUsed returns when each of appKeys was last recorded used;
	// keys never recorded are absent.
	KeysLastUsed(ctx context.Context, appKeys []string) (map[string]time.Time, error)
	// WithExpiredKeys returns the ids of up to limit workspaces holding a
	// key pair that expired by now, for the sweeper, sorted.
	WithExpiredKeys(ctx context.Context, now time.Time, limit int) ([]string, error)

	// ReserveLTIRegistration claims the (issuer, client id) pair for the
	// registration r names, store-wide: of concurrent reservations of one
	// pair exactly one succeeds, the others get
	// ltidomain.ErrRegistrationTaken. A
	// new registration's pair is reserved before the Update that lists it.
	ReserveLTIRegistration(ctx context.Context, issuer, clientID string, r LTIReservation) error
	// LTIReservation returns the reservation of (issuer, clientID);
	// ErrNotFound when there is none.
	LTIReservation(ctx context.Context, issuer, clientID string) (LTIReservation, error)
	// ReleaseLTIRegistration removes the reservation of (issuer, clientID)
	// if registrationID holds it (anyone else's stays); none is fine. It
	// follows the Update that removed the registration, so a crash in
	// between leaves a reservation no workspace lists, which a later
	// reservation of the pair takes over (the app decides when).
	ReleaseLTIRegistration(ctx context.Context, issuer, clientID, registrationID string) error
	// WorkspacesWithLTIIssuer returns up to limit active workspaces (in no
	// particular order) that list a registration of issuer (compared exactly) holding
	// deploymentID, or any registration of issuer when deploymentID is
	// empty: the registrations that can own a login which sends no
	// client_id. A deleted workspace's, or another issuer's with that
	// deployment id, never count.
	WorkspacesWithLTIIssuer(ctx context.Context, issuer, deploymentID string, limit int) ([]*Workspace, error)
}

// LTIReservation is the store-wide claim on an (issuer, client id) pair:
// the registration holding it, and when it was made.
type LTIReservation struct {
	WorkspaceID    string
	RegistrationID string
	CreatedAt      time.Time
}

// KeyUseGranularity is how often, at most, a replica records a key pair's
// use: lastUsedAt is exact to this much (per replica).
const KeyUseGranularity = 15 * time.Minute

// AppKeyReservation is the store-wide claim on an app key.
type AppKeyReservation struct {
	WorkspaceID string
	Retired     bool
}

// ListQuery selects active workspaces, ordered by NameKey(name) then id.
type ListQuery struct {
	// VisibleTo is the caller: its own workspace and those it manages.
	VisibleTo string
	// NameContains is matched, as a plain substring, against NameKey(name);
	// callers pass it already lower-cased. Empty matches every name.
	NameContains string
	// States, when not empty, keeps workspaces whose address.state is one of them.
	States []string
	// After, when set, starts the list after this position.
	After *ListPosition
	// Limit is the most workspaces to return; at least 1.
	Limit int
}

// Selects reports whether w belongs to the list q describes, wherever the
// page starts: active, visible to the caller, its name key containing
// NameContains, its state one of States (when any), and past After (when
// set). It is the rule every store's list query implements; the memory
// store applies it as it stands and the contract suite (repotest) checks
// other stores against it.
func (q ListQuery) Selects(w *Workspace) bool {
	key := NameKey(w.Name())
	switch {
	case w.Deleted() || !w.VisibleTo(q.VisibleTo):
		return false
	case !strings.Contains(key, q.NameContains):
		return false
	case len(q.States) > 0 && !slices.Contains(q.States, w.Address().State):
		return false
	case q.After != nil && (ListPosition{NameKey: key, ID: w.ID()}).Compare(*q.After) <= 0:
		return false
	}
	return true
}

// ListPosition is a place in list order.
type ListPosition struct {
	NameKey string
	ID      string
}

// PositionOf is where w stands in list order.
func PositionOf(w *Workspace) ListPosition {
	return ListPosition{NameKey: NameKey(w.Name()), ID: w.ID()}
}

// Compare orders positions as lists do: by name key, then id.
func (p ListPosition) Compare(o ListPosition) int {
	return cmp.Or(strings.Compare(p.NameKey, o.NameKey), strings.Compare(p.ID, o.ID))
}

// WorkspaceOfLTIRegistration returns the workspace, soft-deleted or not,
// whose registrations list the one that holds the (issuer, client id)
// pair's reservation: what a login and a launch are looked up by, with two
// reads by id (the reservation, then the workspace). A reservation no
// workspace lists (a leftover) finds nothing: ErrNotFound.
func WorkspaceOfLTIRegistration(ctx context.Context, repo Repository, issuer, clientID string) (*Workspace, error) {
	res, err := repo.LTIReservation(ctx, issuer, clientID)
	if err != nil {
		return nil, err
	}
	w, err := repo.Get(ctx, res.WorkspaceID)
	if err != nil {
		return nil, err
	}
	if reg, ok := w.LTIRegistrations().Get(res.RegistrationID); !ok || reg.Issuer != issuer || reg.ClientID != clientID {
		return nil, ErrNotFound
	}
	return w, nil
}
