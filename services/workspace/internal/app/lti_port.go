package app

import (
	"context"

	"github.com/liveproctor/workspaces/services/workspace/internal/domain"
)

// LTIPort is the workspace side of the LTI context's port (ltiapp.Workspaces):
// the tenancy rule of key pairs, the write path with its events, the
// lookups and claims of the store, and the secret box, as the LTI use
// cases need them. It is a type of its own, not methods of App, so that
// the workspace application's own surface names nothing of LTI.
type LTIPort struct{ a *App }

// NewLTIPort returns the port the LTI use cases reach a's workspaces
// through.
func NewLTIPort(a *App) LTIPort { return LTIPort{a: a} }

// Managed is the rule of a workspace's key pairs, which its registrations
// follow: its own, or one it manages.
func (p LTIPort) Managed(ctx context.Context, caller domain.Caller, id string) (*domain.Workspace, error) {
	return p.a.keyManaged(ctx, caller, id)
}

// Get reads workspace id, deleted or not.
func (p LTIPort) Get(ctx context.Context, id string) (*domain.Workspace, error) {
	return p.a.repo.Get(ctx, id)
}

// NotFound is the answer for a workspace that is not there to see.
func (p LTIPort) NotFound(id string) error { return notFound(id) }

// Write is App.write without a precondition, by actor in requestID.
func (p LTIPort) Write(ctx context.Context, actor domain.Actor, requestID string, current *domain.Workspace,
	read func() (*domain.Workspace, error), apply func(*domain.Workspace) (bool, error)) error {
	if current != nil {
		read = readFirst(current, read)
	}
	_, err := p.a.write(ctx, author{actor: actor, requestID: requestID}, read, Precondition{}, apply)
	return err
}

// AppendEvent records an event that rides on no workspace's write.
func (p LTIPort) AppendEvent(ctx context.Context, e domain.Event) error {
	return p.a.appendEvent(ctx, e)
}

// ByConsumerKey finds the workspace of a key pair.
func (p LTIPort) ByConsumerKey(ctx context.Context, appKey string) (*domain.Workspace, error) {
	return p.a.repo.GetByAppKey(ctx, appKey)
}

// OpenSecret opens a key pair's shared secret.
func (p LTIPort) OpenSecret(k domain.KeyPair) (string, error) {
	return p.a.secrets.Open(k.AppKey, k.SealedSecret)
}

// KeyUsed notes a use of the key pair appKey, written in the background as
// an authentication's is.
func (p LTIPort) KeyUsed(appKey string) { p.a.uses.note(appKey, p.a.now()) }

// IsRoot reports whether caller is a key pair of the root workspace, known
// once Bootstrap has run.
func (p LTIPort) IsRoot(caller domain.Caller) bool { return p.a.isRoot(caller) }

// ByLTIPair finds the workspace of the registration of (issuer, clientID).
func (p LTIPort) ByLTIPair(ctx context.Context, issuer, clientID string) (*domain.Workspace, error) {
	return domain.WorkspaceOfLTIRegistration(ctx, p.a.repo, issuer, clientID)
}

// WithLTIIssuer finds active workspaces with registrations of issuer.
func (p LTIPort) WithLTIIssuer(ctx context.Context, issuer, deploymentID string, limit int) ([]*domain.Workspace, error) {
	return p.a.repo.WorkspacesWithLTIIssuer(ctx, issuer, deploymentID, limit)
}

// ReservePair claims (issuer, clientID) store-wide.
func (p LTIPort) ReservePair(ctx context.Context, issuer, clientID string, r domain.LTIReservation) error {
	return p.a.repo.ReserveLTIRegistration(ctx, issuer, clientID, r)
}

// Reservation reads the claim on (issuer, clientID).
func (p LTIPort) Reservation(ctx context.Context, issuer, clientID string) (domain.LTIReservation, error) {
	return p.a.repo.LTIReservation(ctx, issuer, clientID)
}

// ReleasePair removes registrationID's claim on (issuer, clientID).
func (p LTIPort) ReleasePair(ctx context.Context, issuer, clientID, registrationID string) error {
	return p.a.repo.ReleaseLTIRegistration(ctx, issuer, clientID, registrationID)
}
