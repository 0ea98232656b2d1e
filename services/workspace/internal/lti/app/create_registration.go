package app

import (
	"context"

	"github.com/liveproctor/workspaces/services/workspace/internal/domain"
	ltidomain "github.com/liveproctor/workspaces/services/workspace/internal/lti/domain"
)

// Create registers an LTI 1.3 platform with a workspace the caller owns or
// manages (the rule of its key pairs): the pair is reserved store-wide
// first, then listed by the workspace's revision-checked write. A new
// registration has had no launch: its health is empty, and not read.
func (r *Registrations) Create(ctx context.Context, caller domain.Caller, id string, in ltidomain.NewRegistration) (RegistrationView, error) {
	if err := ltidomain.CheckNewRegistration(in, r.s.Policy); err != nil {
		return RegistrationView{}, err
	}
	current, err := r.ws.Managed(ctx, caller, id)
	if err != nil {
		return RegistrationView{}, err
	}
	reg, err := r.add(ctx, caller.Actor(), caller.RequestID, current, func() (*domain.Workspace, error) { return r.ws.Managed(ctx, caller, id) }, in, nil)
	if err != nil {
		return RegistrationView{}, err
	}
	return RegistrationView{Registration: reg}, nil
}
