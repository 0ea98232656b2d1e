package memstore_test

import (
	"testing"

	"github.com/liveproctor/workspaces/services/workspace/internal/adapters/memstore"
	"github.com/liveproctor/workspaces/services/workspace/internal/domain/repotest"
	ltidomain "github.com/liveproctor/workspaces/services/workspace/internal/lti/domain"
)

func TestToolKeyStoreContract(t *testing.T) {
	repotest.ToolKeyStore(t, func(*testing.T) ltidomain.ToolKeyStore { return &memstore.ToolKeys{} })
}
