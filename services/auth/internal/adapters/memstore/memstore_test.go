package memstore_test

import (
	"testing"
	"time"

	"github.com/liveproctor/workspaces/services/auth/internal/adapters/memstore"
	"github.com/liveproctor/workspaces/services/auth/internal/domain"
	"github.com/liveproctor/workspaces/services/auth/internal/domain/tokenstoretest"
)

func TestStoreContract(t *testing.T) {
	tokenstoretest.Run(t, func(_ *testing.T, now func() time.Time) domain.TokenStore { return memstore.New(now) })
}
