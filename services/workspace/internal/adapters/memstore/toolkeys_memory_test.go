package memstore_test

import (
	"testing"

	"github.com/liveproctor/workspaces/services/workspace/internal/adapters/memstore"
	"github.com/liveproctor/workspaces/services/workspace/internal/domain"
	"github.com/liveproctor/workspaces/services/workspace/internal/domain/repotest"
)

func TestToolKeyStoreContract(t *testing.T) {
	repotest.ToolKeyStore(t, func(*testing.T) domain.ToolKeyStore { return &memstore.ToolKeys{} })
}
