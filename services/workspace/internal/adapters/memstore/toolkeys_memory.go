package memstore

import (
	"context"
	"slices"
	"sync"

	"github.com/liveproctor/workspaces/services/workspace/internal/domain"
)

// ToolKeys is a domain.ToolKeyStore in memory, for tests.
type ToolKeys struct {
	mu  sync.Mutex
	set domain.ToolKeys
}

var _ domain.ToolKeyStore = (*ToolKeys)(nil)

// ToolKeys returns a copy of the stored set.
func (m *ToolKeys) ToolKeys(context.Context) (domain.ToolKeys, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return domain.ToolKeys{Keys: slices.Clone(m.set.Keys), Revision: m.set.Revision}, nil
}

// SaveToolKeys stores s if the stored revision is still s.Revision.
func (m *ToolKeys) SaveToolKeys(_ context.Context, s domain.ToolKeys) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if s.Revision != m.set.Revision {
		return domain.ErrRevisionChanged
	}
	m.set = domain.ToolKeys{Keys: slices.Clone(s.Keys), Revision: s.Revision + 1}
	return nil
}
