package mongostore_test

import (
	"testing"

	"github.com/liveproctor/workspaces/services/workspace/internal/domain"
	"github.com/liveproctor/workspaces/services/workspace/internal/domain/repotest"
)

func TestToolKeyStoreContract(t *testing.T) {
	repotest.ToolKeyStore(t, func(t *testing.T) domain.ToolKeyStore { return newRepository(t) })
}
