package domain

import (
	"context"
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
	// GetByAppKey returns the workspace owning the app key, soft-deleted or not.
	GetByAppKey(ctx context.Context, appKey string) (*Workspace, error)
	// List returns active workspaces matching q, in list order.
	List(ctx context.Context, q ListQuery) ([]*Workspace, error)
	// Update stores w's mutable fields (name, type, parent, address,
	// products, objective documents, key pairs, updated, deleted and token
	// cutoff times) if the stored revision is still w.Revision(), and
	// returns w as it now is: at the next revision. Otherwise it returns
	// ErrRevisionChanged. Every change of key pairs goes through it, so
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
	// key pair that expired by now, for the sweeper.
	WithExpiredKeys(ctx context.Context, now time.Time, limit int) ([]string, error)
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

// ListPosition is a place in list order.
type ListPosition struct {
	NameKey string
	ID      string
}
