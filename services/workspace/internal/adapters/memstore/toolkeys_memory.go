package memstore

import (
	"context"
	"slices"
	"sync"

	"github.com/liveproctor/workspaces/services/workspace/internal/domain"
	ltidomain "github.com/liveproctor/workspaces/services/workspace/internal/lti/domain"
)

// ToolKeys is a ltidomain.ToolKeyStore in memory, for tests.
type ToolKeys struct {
	mu  sync.Mutex
	set ltidomain.ToolKeys
}

var _ ltidomain.ToolKeyStore = (*ToolKeys)(nil)

// ToolKeys returns a copy of the stored set.
func (m *ToolKeys) ToolKeys(context.Context) (ltidomain.ToolKeys, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return ltidomain.ToolKeys{Keys: slices.Clone(m.set.Keys), Revision: m.set.Revision}, nil
}

// SaveToolKeys stores s if the stored revision is still s.Revision.
func (m *ToolKeys) SaveToolKeys(_ context.Context, s ltidomain.ToolKeys) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if s.Revision != m.set.Revision {
		return domain.ErrRevisionChanged
	}
	m.set = ltidomain.ToolKeys{Keys: slices.Clone(s.Keys), Revision: s.Revision + 1}
	return nil
}
