package memstore_test

import (
	"testing"

	"github.com/liveproctor/workspaces/services/workspace/internal/adapters/memstore"
	"github.com/liveproctor/workspaces/services/workspace/internal/domain"
	"github.com/liveproctor/workspaces/services/workspace/internal/domain/repotest"
)

func TestRepositoryContract(t *testing.T) {
	repotest.Run(t, func(*testing.T) domain.Repository { return memstore.New() })
}
