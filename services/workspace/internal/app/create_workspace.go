package app

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/liveproctor/workspaces/pkg/fault"
	"github.com/liveproctor/workspaces/pkg/ident"
	"github.com/liveproctor/workspaces/services/workspace/internal/domain"
)

// CreateInput is a create request as the caller sent it.
type CreateInput struct {
	ID       string
	Name     string
	Type     string
	ParentID string // empty: no parent
	Address  domain.Address
	Products []string
	// RateLimit is the new workspace's own limit for its key pairs; nil:
	// the service's default. (Left out of fingerprints when nil, so they
	// stay what they were before workspaces had limits.)
	RateLimit *domain.RateLimit `json:",omitempty"`
}

// CreateResult is what a create returns, and returns again to a retry.
type CreateResult struct {
	WorkspaceID       string
	Type              domain.Type
	Name              string
	RegistrationCodes []string
	LTI               LTIKeys
	Server            ServerKeys
}

// LTIKeys is the LTI consumer key pair and where an LMS finds the tool.
type LTIKeys struct {
	ConsumerKey      string
	SharedSecret     string
	ConfigurationURL string
	LaunchURL        string
}

// ServerKeys is the key pair a back end calls the API with.
type ServerKeys struct {
	ConsumerKey  string
	SharedSecret string
}

// createAttempts bounds retries after a generated app key or registration
// code turned out to be taken (practically never: both are random).
const createAttempts = 5

// ErrIDTakenByOther: the id exists and this is not a retry of its create.
var errIDTakenByOther = fault.New(fault.Conflict,
	"a workspace with this id already exists; a retry must repeat the original create exactly")

// CreateWorkspace creates a workspace managed by the caller. A retry with the
// same id, caller and body returns the original result; any other create of
// an existing id is a conflict.
func (a *App) CreateWorkspace(ctx context.Context, caller domain.Caller, in CreateInput) (CreateResult, error) {
	d, err := domain.CheckNewWorkspace(in.ID, domain.Details{
		Name:      in.Name,
		Type:      domain.Type(in.Type),
		ParentID:  in.ParentID,
		Address:   in.Address,
		Products:  in.Products,
		RateLimit: in.RateLimit,
	})
	if err != nil {
		return CreateResult{}, err
	}
	in.Name = d.Name // an identical retry may differ in spaces around the name
	fingerprint := createFingerprint(caller.WorkspaceID, in)
	creator, existing, err := a.createDependencies(ctx, caller, in)
	switch {
	case err != nil:
		return CreateResult{}, err
	case existing != nil:
		return a.answerRetry(ctx, caller, existing, fingerprint)
	}
	return a.insertNew(ctx, caller, in.ID, d, creator, fingerprint)
}

// createDependencies reads, in one read, what a create depends on: the
// caller's workspace (its products, and the managers the new one
// inherits), the parent, and the id itself, which exists already when
// this is a retry (then existing is that workspace). It checks the parent
// and the products against them.
func (a *App) createDependencies(ctx context.Context, caller domain.Caller, in CreateInput) (creator, existing *domain.Workspace, err error) {
	ids := []string{caller.WorkspaceID, in.ID}
	if in.ParentID != "" {
		ids = append(ids, in.ParentID)
	}
	found, err := a.repo.GetMany(ctx, ids...)
	if err != nil {
		return nil, nil, fmt.Errorf("get the workspaces a create depends on: %w", err)
	}
	if existing, ok := found[in.ID]; ok {
		return nil, existing, nil
	}
	creator, ok := found[caller.WorkspaceID]
	if !ok {
		return nil, nil, fmt.Errorf("get caller workspace: %w", domain.ErrNotFound)
	}
	if in.ParentID != "" {
		if parent := found[in.ParentID]; parent == nil || !seenBy(parent, caller) {
			return nil, nil, parentNotFound(in.ParentID)
		}
	}
	if err := checkProducts(creator, in.Products, nil); err != nil {
		return nil, nil, err
	}
	return creator, nil, nil
}

// insertNew stores the new workspace with fresh credentials, generating
// others when a key or code turns out to be taken, and publishes its
// events.
func (a *App) insertNew(ctx context.Context, caller domain.Caller, id string, d domain.Details, creator *domain.Workspace, fingerprint string) (CreateResult, error) {
	now := a.timestamp()
	for attempt := 1; ; attempt++ {
		creds, err := a.newCredentials()
		if err != nil {
			return CreateResult{}, err
		}
		w, err := domain.NewWorkspace(id, d, creator, creds, fingerprint, now)
		if err != nil {
			return CreateResult{}, err
		}
		w.Attribute(caller.Actor(), caller.RequestID)
		err = a.repo.Create(ctx, w)
		switch {
		case err == nil:
			if err := a.publish(ctx, w); err != nil {
				return CreateResult{}, err
			}
			return a.createResult(w)
		case errors.Is(err, domain.ErrIDTaken):
			// A concurrent create of the same id won; it may be this very
			// request, retried by the caller before the first answer came.
			return a.retriedCreate(ctx, caller, id, fingerprint)
		case (errors.Is(err, domain.ErrAppKeyTaken) || errors.Is(err, domain.ErrCodeTaken)) && attempt < createAttempts:
			continue
		default:
			return CreateResult{}, fmt.Errorf("create workspace: %w", err)
		}
	}
}

// retriedCreate answers a create whose id turned out to be taken by a
// concurrent one.
func (a *App) retriedCreate(ctx context.Context, caller domain.Caller, id, fingerprint string) (CreateResult, error) {
	w, err := a.repo.Get(ctx, id)
	if err != nil {
		return CreateResult{}, fmt.Errorf("get workspace: %w", err)
	}
	return a.answerRetry(ctx, caller, w, fingerprint)
}

// answerRetry answers a create of an id that exists: the original result
// when the caller and body are the same, a conflict when not.
func (a *App) answerRetry(ctx context.Context, caller domain.Caller, w *domain.Workspace, fingerprint string) (CreateResult, error) {
	if w.CreatedBy() != caller.WorkspaceID || w.CreateFingerprint() != fingerprint {
		return CreateResult{}, errIDTakenByOther
	}
	// The first attempt may have stored the workspace and failed to
	// publish its event: the retry is acknowledged only once it is.
	if err := a.publish(ctx, w); err != nil {
		return CreateResult{}, err
	}
	return a.createResult(w)
}

func (a *App) createResult(w *domain.Workspace) (CreateResult, error) {
	res := CreateResult{
		WorkspaceID:       w.ID(),
		Type:              w.Type(),
		Name:              w.Name(),
		RegistrationCodes: w.RegistrationCodes(),
	}
	// A retry after the pairs were rotated or revoked answers the first
	// pair of each role the workspace still holds (empty when none).
	res.LTI = LTIKeys{ConfigurationURL: a.settings.LTIToolURLs.LTI11Configuration(w.ID()), LaunchURL: a.settings.LTIToolURLs.LTI11Launch()}
	if server, ok := w.KeyByRole(domain.RoleServer); ok {
		secret, err := a.secrets.Open(server.AppKey, server.SealedSecret)
		if err != nil {
			return CreateResult{}, fmt.Errorf("open the server secret of %s: %w", w.ID(), err)
		}
		res.Server = ServerKeys{ConsumerKey: server.AppKey, SharedSecret: secret}
	}
	if lti, ok := w.KeyByRole(domain.RoleLTI); ok {
		secret, err := a.secrets.Open(lti.AppKey, lti.SealedSecret)
		if err != nil {
			return CreateResult{}, fmt.Errorf("open the LTI secret of %s: %w", w.ID(), err)
		}
		res.LTI.ConsumerKey, res.LTI.SharedSecret = lti.AppKey, secret
	}
	return res, nil
}

// newCredentials generates what a new workspace is reached by: a server and
// an LTI key pair, their secrets sealed, and a registration code.
func (a *App) newCredentials() (domain.Credentials, error) {
	server, err := a.seal(ident.NewUUID(), ident.NewUUID())
	if err != nil {
		return domain.Credentials{}, err
	}
	lti, err := a.seal(ident.NewUUID(), ident.NewUUID())
	if err != nil {
		return domain.Credentials{}, err
	}
	return domain.Credentials{Server: server, LTI: lti, RegistrationCode: newRegistrationCode()}, nil
}

// seal keeps a new secret for appKey as the service stores it.
func (a *App) seal(appKey, secret string) (domain.SealedKey, error) {
	sealed, err := a.secrets.Seal(appKey, secret)
	if err != nil {
		return domain.SealedKey{}, fmt.Errorf("seal secret: %w", err)
	}
	return domain.SealedKey{AppKey: appKey, SealedSecret: sealed, SecretDigest: a.secrets.Digest(appKey, secret)}, nil
}

// createFingerprint identifies a create request (after trimming) by its
// caller and every field, so an identical retry can be recognised.
func createFingerprint(caller string, in CreateInput) string {
	b, _ := json.Marshal(struct {
		Caller string
		In     CreateInput
	}{caller, in})
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}
