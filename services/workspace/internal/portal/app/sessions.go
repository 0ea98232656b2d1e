package app

import (
	"context"

	"github.com/liveproctor/workspaces/pkg/ident"
	portaldomain "github.com/liveproctor/workspaces/services/workspace/internal/portal/domain"
)

// Sessions checks the portal sessions' tokens for the workspace service's
// policy (app.PortalSessions), which then holds the link to its workspace
// (deleted since?) and admits the call as the session's. It needs the
// store only, so the policy can be built with it before the workspace
// side the portal's use cases reach.
type Sessions struct {
	store Store
	s     Settings
}

// NewSessions returns the check of sessions in store.
func NewSessions(store Store, s Settings) *Sessions {
	if store == nil {
		panic("portalapp: the sessions' store is nil")
	}
	return &Sessions{store: store, s: s.withDefaults()}
}

// Check returns the link whose session token is: opened, not revoked, its
// session not over. Anything else is portaldomain.ErrSessionOver.
func (s *Sessions) Check(ctx context.Context, token string) (portaldomain.Link, error) {
	if !ident.IsSecret(token) {
		return portaldomain.Link{}, portaldomain.ErrSessionOver
	}
	id, ok, err := s.store.SessionLink(ctx, token)
	if err != nil || !ok {
		return portaldomain.Link{}, sessionError(err)
	}
	l, ok, err := s.store.Link(ctx, id)
	if err != nil || !ok {
		return portaldomain.Link{}, sessionError(err)
	}
	if !l.Admits(portaldomain.Digest(token), s.s.Now()) {
		return portaldomain.Link{}, portaldomain.ErrSessionOver
	}
	return l, nil
}

// sessionError is a lookup's failure, or, when there is none, the session
// not found.
func sessionError(err error) error {
	if err != nil {
		return err
	}
	return portaldomain.ErrSessionOver
}
