// Package memstore is an in-memory workspace repository for unit tests of
// the application. It passes the same contract suite as the Mongo adapter.
package memstore

import (
	"context"
	"maps"
	"slices"
	"sync"
	"time"

	"github.com/liveproctor/workspaces/services/workspace/internal/domain"
	ltidomain "github.com/liveproctor/workspaces/services/workspace/internal/lti/domain"
)

// Repository keeps workspaces in a map. Values are copied in and out, so
// callers never alias stored state.
type Repository struct {
	mu         sync.Mutex
	workspaces map[string]*domain.Workspace
	appKeys    map[string]string // app key -> workspace id
	codes      map[string]string // registration code -> workspace id
	outboxes   map[string][]domain.Event
	events     map[string]domain.Event // by change key
	lastUsed   map[string]time.Time
	retired    map[string]bool // app keys
	lti        map[ltiPair]domain.LTIReservation
}

// ltiPair is an (issuer, client id) pair, the key of its reservation.
type ltiPair struct{ issuer, clientID string }

var _ domain.Repository = (*Repository)(nil)

// New returns an empty repository.
func New() *Repository {
	return &Repository{workspaces: map[string]*domain.Workspace{}, appKeys: map[string]string{}, codes: map[string]string{},
		outboxes: map[string][]domain.Event{}, events: map[string]domain.Event{}, lastUsed: map[string]time.Time{}, retired: map[string]bool{},
		lti: map[ltiPair]domain.LTIReservation{}}
}

func (r *Repository) Create(_ context.Context, w *domain.Workspace) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, ok := r.workspaces[w.ID()]; ok {
		return domain.ErrIDTaken
	}
	keys, codes := w.Keys(), w.RegistrationCodes()
	for _, k := range keys {
		if _, ok := r.appKeys[k.AppKey]; ok {
			return domain.ErrAppKeyTaken
		}
	}
	for _, c := range codes {
		if _, ok := r.codes[c]; ok {
			return domain.ErrCodeTaken
		}
	}
	for _, k := range keys {
		r.appKeys[k.AppKey] = w.ID()
	}
	for _, c := range codes {
		r.codes[c] = w.ID()
	}
	stored := record(w)
	stored.Revision = 1
	r.workspaces[w.ID()] = domain.UnmarshalWorkspaceFromDatabase(stored)
	r.outboxes[w.ID()] = append(r.outboxes[w.ID()], w.PendingEvents()...)
	return nil
}

func (r *Repository) Get(_ context.Context, id string) (*domain.Workspace, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	w, ok := r.workspaces[id]
	if !ok {
		return nil, domain.ErrNotFound
	}
	return clone(w), nil
}

func (r *Repository) GetMany(_ context.Context, ids ...string) (map[string]*domain.Workspace, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := map[string]*domain.Workspace{}
	for _, id := range ids {
		if w, ok := r.workspaces[id]; ok {
			out[id] = clone(w)
		}
	}
	return out, nil
}

func (r *Repository) GetByAppKey(ctx context.Context, appKey string) (*domain.Workspace, error) {
	r.mu.Lock()
	id, ok := r.appKeys[appKey]
	r.mu.Unlock()
	if !ok {
		return nil, domain.ErrNotFound
	}
	w, err := r.Get(ctx, id)
	if err != nil {
		return nil, err
	}
	if _, listed := w.KeyByAppKey(appKey); !listed {
		return nil, domain.ErrNotFound // revoked: the reservation outlives the pair
	}
	return w, nil
}

func (r *Repository) List(_ context.Context, q domain.ListQuery) ([]*domain.Workspace, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []*domain.Workspace
	for _, w := range r.workspaces {
		if q.Selects(w) {
			out = append(out, w)
		}
	}
	slices.SortFunc(out, func(a, b *domain.Workspace) int { return domain.PositionOf(a).Compare(domain.PositionOf(b)) })
	if len(out) > q.Limit {
		out = out[:q.Limit]
	}
	for i, w := range out {
		out[i] = clone(w)
	}
	return out, nil
}

func (r *Repository) Update(_ context.Context, w *domain.Workspace) (*domain.Workspace, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	stored, ok := r.workspaces[w.ID()]
	if !ok {
		return nil, domain.ErrNotFound
	}
	if stored.Revision() != w.Revision() {
		return nil, domain.ErrRevisionChanged
	}
	next := record(stored)
	next.Name, next.Type, next.ParentID, next.Address = w.Name(), w.Type(), w.ParentID(), w.Address()
	next.Products, next.ObjectiveDocuments = w.Products(), w.ObjectiveDocuments()
	next.Keys = w.Keys()
	next.LTIRegistrations = w.LTIRegistrations().All()
	next.Webhooks = w.Webhooks().All()
	next.RateLimit = rateLimit(w)
	next.UpdatedAt, next.DeletedAt, next.TokenCutoff = w.UpdatedAt(), w.DeletedAt(), w.TokenCutoff()
	next.Revision++
	r.workspaces[w.ID()] = domain.UnmarshalWorkspaceFromDatabase(next)
	r.outboxes[w.ID()] = append(r.outboxes[w.ID()], w.PendingEvents()...)
	return clone(r.workspaces[w.ID()]), nil
}

func (r *Repository) ReserveAppKey(_ context.Context, workspaceID, appKey string) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, taken := r.appKeys[appKey]; taken {
		return domain.ErrAppKeyTaken
	}
	r.appKeys[appKey] = workspaceID
	return nil
}

func (r *Repository) RetireAppKeys(_ context.Context, appKeys []string) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, k := range appKeys {
		if _, ok := r.appKeys[k]; ok {
			r.retired[k] = true
		}
	}
	return nil
}

func (r *Repository) AppKeyReservation(_ context.Context, appKey string) (domain.AppKeyReservation, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	id, ok := r.appKeys[appKey]
	if !ok {
		return domain.AppKeyReservation{}, domain.ErrNotFound
	}
	return domain.AppKeyReservation{WorkspaceID: id, Retired: r.retired[appKey]}, nil
}

func (r *Repository) RecordKeyUse(_ context.Context, appKey string, at time.Time) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, ok := r.appKeys[appKey]; ok {
		r.lastUsed[appKey] = at
	}
	return nil
}

func (r *Repository) KeysLastUsed(_ context.Context, appKeys []string) (map[string]time.Time, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := map[string]time.Time{}
	for _, k := range appKeys {
		if at, ok := r.lastUsed[k]; ok {
			out[k] = at
		}
	}
	return out, nil
}

func (r *Repository) WithExpiredKeys(_ context.Context, now time.Time, limit int) ([]string, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []string
	for id, w := range r.workspaces {
		if len(out) < limit && slices.ContainsFunc(w.Keys(), func(k domain.KeyPair) bool { return k.Expired(now) }) {
			out = append(out, id)
		}
	}
	slices.Sort(out)
	return out, nil
}

func (r *Repository) ReserveLTIRegistration(_ context.Context, issuer, clientID string, res domain.LTIReservation) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	key := ltiPair{issuer, clientID}
	if _, taken := r.lti[key]; taken {
		return ltidomain.ErrRegistrationTaken
	}
	r.lti[key] = res
	return nil
}

func (r *Repository) LTIReservation(_ context.Context, issuer, clientID string) (domain.LTIReservation, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	res, ok := r.lti[ltiPair{issuer, clientID}]
	if !ok {
		return domain.LTIReservation{}, domain.ErrNotFound
	}
	return res, nil
}

func (r *Repository) ReleaseLTIRegistration(_ context.Context, issuer, clientID, registrationID string) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	key := ltiPair{issuer, clientID}
	if r.lti[key].RegistrationID == registrationID {
		delete(r.lti, key)
	}
	return nil
}

func (r *Repository) WorkspacesWithLTIIssuer(_ context.Context, issuer, deploymentID string, limit int) ([]*domain.Workspace, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []*domain.Workspace
	for _, id := range slices.Sorted(maps.Keys(r.workspaces)) {
		if w := r.workspaces[id]; len(out) < limit && !w.Deleted() && len(w.LTIRegistrations().Owning(issuer, deploymentID)) > 0 {
			out = append(out, clone(w))
		}
	}
	return out, nil
}

// record is everything w holds. The getters copy, so it shares nothing
// with w.
func record(w *domain.Workspace) domain.StoredWorkspace {
	return domain.StoredWorkspace{
		ID:                 w.ID(),
		Name:               w.Name(),
		Type:               w.Type(),
		ParentID:           w.ParentID(),
		Address:            w.Address(),
		Products:           w.Products(),
		ObjectiveDocuments: w.ObjectiveDocuments(),
		RateLimit:          rateLimit(w),
		Tags:               w.Tags(),
		SupportToolID:      w.SupportToolID(),
		CreatedBy:          w.CreatedBy(),
		Managers:           w.Managers(),
		Keys:               w.Keys(),
		RegistrationCodes:  w.RegistrationCodes(),
		LTIRegistrations:   w.LTIRegistrations().All(),
		Webhooks:           w.Webhooks().All(),
		CreateFingerprint:  w.CreateFingerprint(),
		CreatedAt:          w.CreatedAt(),
		UpdatedAt:          w.UpdatedAt(),
		DeletedAt:          w.DeletedAt(),
		TokenCutoff:        w.TokenCutoff(),
		Revision:           w.Revision(),
	}
}

// rateLimit is w's own rate limit as a store keeps it: nil for none.
func rateLimit(w *domain.Workspace) *domain.RateLimit {
	if r, ok := w.RateLimit(); ok {
		return &r
	}
	return nil
}

func clone(w *domain.Workspace) *domain.Workspace {
	return domain.UnmarshalWorkspaceFromDatabase(record(w))
}
