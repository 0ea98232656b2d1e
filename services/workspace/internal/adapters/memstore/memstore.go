// Package memstore is an in-memory workspace repository for unit tests of
// the application. It passes the same contract suite as the Mongo adapter.
package memstore

import (
	"cmp"
	"context"
	"slices"
	"strings"
	"sync"

	"github.com/liveproctor/workspaces/services/workspace/internal/domain"
)

// Repository keeps workspaces in a map. Values are copied in and out, so
// callers never alias stored state.
type Repository struct {
	mu         sync.Mutex
	workspaces map[string]*domain.Workspace
	appKeys    map[string]string // app key -> workspace id
	codes      map[string]string // registration code -> workspace id
}

var _ domain.Repository = (*Repository)(nil)

// New returns an empty repository.
func New() *Repository {
	return &Repository{workspaces: map[string]*domain.Workspace{}, appKeys: map[string]string{}, codes: map[string]string{}}
}

func (r *Repository) Create(_ context.Context, w *domain.Workspace) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, ok := r.workspaces[w.ID]; ok {
		return domain.ErrIDTaken
	}
	for _, k := range w.Keys {
		if _, ok := r.appKeys[k.AppKey]; ok {
			return domain.ErrAppKeyTaken
		}
	}
	for _, c := range w.RegistrationCodes {
		if _, ok := r.codes[c]; ok {
			return domain.ErrCodeTaken
		}
	}
	for _, k := range w.Keys {
		r.appKeys[k.AppKey] = w.ID
	}
	for _, c := range w.RegistrationCodes {
		r.codes[c] = w.ID
	}
	stored := clone(w)
	stored.Revision = 1
	r.workspaces[w.ID] = stored
	w.Revision = 1
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

func (r *Repository) GetByAppKey(ctx context.Context, appKey string) (*domain.Workspace, error) {
	r.mu.Lock()
	id, ok := r.appKeys[appKey]
	r.mu.Unlock()
	if !ok {
		return nil, domain.ErrNotFound
	}
	return r.Get(ctx, id)
}

func (r *Repository) List(_ context.Context, q domain.ListQuery) ([]*domain.Workspace, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []*domain.Workspace
	for _, w := range r.workspaces {
		key := domain.NameKey(w.Name)
		switch {
		case w.Deleted() || !w.VisibleTo(q.VisibleTo):
		case !strings.Contains(key, q.NameContains):
		case len(q.States) > 0 && !slices.Contains(q.States, w.Address.State):
		case q.After != nil && (key < q.After.NameKey || key == q.After.NameKey && w.ID <= q.After.ID):
		default:
			out = append(out, w)
		}
	}
	slices.SortFunc(out, func(a, b *domain.Workspace) int {
		return cmp.Or(strings.Compare(domain.NameKey(a.Name), domain.NameKey(b.Name)), strings.Compare(a.ID, b.ID))
	})
	if len(out) > q.Limit {
		out = out[:q.Limit]
	}
	for i, w := range out {
		out[i] = clone(w)
	}
	return out, nil
}

func (r *Repository) Update(_ context.Context, w *domain.Workspace) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	stored, ok := r.workspaces[w.ID]
	if !ok {
		return domain.ErrNotFound
	}
	if stored.Revision != w.Revision {
		return domain.ErrRevisionChanged
	}
	next := clone(stored)
	next.Name, next.Type, next.ParentID, next.Address = w.Name, w.Type, w.ParentID, w.Address
	next.Products = slices.Clone(w.Products)
	next.ObjectiveDocuments = slices.Clone(w.ObjectiveDocuments)
	next.UpdatedAt, next.DeletedAt, next.TokenCutoff = w.UpdatedAt, w.DeletedAt, w.TokenCutoff
	next.Revision++
	r.workspaces[w.ID] = next
	w.Revision = next.Revision
	return nil
}

func (r *Repository) AddKey(_ context.Context, workspaceID string, k domain.KeyPair) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	stored, ok := r.workspaces[workspaceID]
	if !ok {
		return domain.ErrNotFound
	}
	if _, taken := r.appKeys[k.AppKey]; taken {
		return domain.ErrAppKeyTaken
	}
	r.appKeys[k.AppKey] = workspaceID
	next := clone(stored)
	next.Keys = append(next.Keys, cloneKey(k))
	r.workspaces[workspaceID] = next
	return nil
}

func clone(w *domain.Workspace) *domain.Workspace {
	c := *w
	c.Products = slices.Clone(w.Products)
	c.ObjectiveDocuments = slices.Clone(w.ObjectiveDocuments)
	c.Tags = slices.Clone(w.Tags)
	c.Managers = slices.Clone(w.Managers)
	c.RegistrationCodes = slices.Clone(w.RegistrationCodes)
	c.Keys = make([]domain.KeyPair, len(w.Keys))
	for i, k := range w.Keys {
		c.Keys[i] = cloneKey(k)
	}
	return &c
}

func cloneKey(k domain.KeyPair) domain.KeyPair {
	k.SealedSecret = slices.Clone(k.SealedSecret)
	k.SecretDigest = slices.Clone(k.SecretDigest)
	k.Tags = slices.Clone(k.Tags)
	return k
}
