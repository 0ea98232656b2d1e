package service

import (
	"github.com/liveproctor/workspaces/services/workspace/internal/portal/adapters/portalstate"
	portalapp "github.com/liveproctor/workspaces/services/workspace/internal/portal/app"
)

// portalLinksInMemory bounds the portal links a replica without Redis
// keeps (each for at most an hour and five minutes).
const portalLinksInMemory = 10_000

// newPortalStore is where the administrator's portal keeps its links and
// sessions: in Redis when there is one, so that a link made through one
// replica opens through another, and a revocation or a sign-out ends the
// session on every replica at once (while Redis is unreachable the portal
// answers UNAVAILABLE); in this replica's memory otherwise.
func (s *Service) newPortalStore() portalapp.Store {
	if s.redis != nil {
		return portalstate.NewRedisStore(s.redis)
	}
	return portalstate.NewMemoryStore(portalLinksInMemory, nil)
}

// portalSettings are the portal's: its links lead below PUBLIC_BASE_URL.
func (s *Service) portalSettings() portalapp.Settings {
	return portalapp.Settings{BaseURL: s.cfg.LTIBaseURL, Logger: s.logger}
}

// newPortal builds the portal's use cases over the workspace side
// (workspaces) and the store its policy checks sessions in.
func (s *Service) newPortal(workspaces portalapp.Workspaces, store portalapp.Store) *portalapp.Portal {
	return portalapp.New(workspaces, store, s.portalSettings())
}
