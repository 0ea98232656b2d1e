package app

import (
	"context"
	"crypto/subtle"
	"errors"
	"fmt"
	"slices"

	"github.com/liveproctor/workspaces/pkg/fault"
	"github.com/liveproctor/workspaces/pkg/ident"
	"github.com/liveproctor/workspaces/services/workspace/internal/domain"
)

// BootstrapConfig describes the root workspace, from configuration.
type BootstrapConfig struct {
	WorkspaceID string
	Name        string
	Products    []string
	// AppKey and AppSecret, when both set, are a key pair that must exist on
	// the root workspace after every start (a rotated secret store takes
	// effect on restart). When unset, a pair is generated on the very first
	// start only.
	AppKey    string
	AppSecret string
}

// BootstrapResult reports what a start did to the root workspace.
type BootstrapResult struct {
	Created bool
	// GeneratedKey and GeneratedSecret are set only when this start
	// generated the root's key pair: the one time they can be shown.
	GeneratedKey    string
	GeneratedSecret string
}

// Bootstrap makes sure the root workspace exists as configured. It is safe to
// run on every start and from several replicas at once: a restart never
// creates a second root.
// Once it succeeds the app knows which workspace is the root: only the
// root's key pairs may verify LTI launches.
func (a *App) Bootstrap(ctx context.Context, cfg BootstrapConfig) (BootstrapResult, error) {
	switch {
	case cfg.AppKey != "" && cfg.AppSecret == "":
		return BootstrapResult{}, fault.InvalidField("appSecret", "is required with an app key")
	case cfg.AppKey == "" && cfg.AppSecret != "":
		return BootstrapResult{}, fault.InvalidField("appKey", "is required with an app secret")
	}
	d, err := domain.CheckNewWorkspace(cfg.WorkspaceID, rootDetails(cfg))
	if err != nil {
		return BootstrapResult{}, err
	}
	cfg.Name = d.Name
	for {
		root, err := a.reconcileRoot(ctx, cfg)
		switch {
		case errors.Is(err, domain.ErrNotFound):
			res, err := a.createRoot(ctx, cfg)
			if errors.Is(err, domain.ErrIDTaken) {
				continue // another replica created it first
			}
			if err == nil {
				a.rootID.Store(&cfg.WorkspaceID)
			}
			return res, err
		case err != nil:
			return BootstrapResult{}, fmt.Errorf("update root workspace: %w", err)
		}
		if err := a.addRootKey(ctx, root, cfg); err != nil {
			return BootstrapResult{}, err
		}
		a.rootID.Store(&cfg.WorkspaceID)
		return BootstrapResult{}, nil
	}
}

// rootDetails are the root workspace's details as configured: a district.
func rootDetails(cfg BootstrapConfig) domain.Details {
	return domain.Details{Name: cfg.Name, Type: domain.TypeDistrict, Products: cfg.Products}
}

func (a *App) createRoot(ctx context.Context, cfg BootstrapConfig) (BootstrapResult, error) {
	var res BootstrapResult
	appKey, secret := cfg.AppKey, cfg.AppSecret
	if appKey == "" {
		appKey, secret = ident.NewUUID(), ident.NewUUID()
		res.GeneratedKey, res.GeneratedSecret = appKey, secret
	}
	key, err := a.seal(appKey, secret)
	if err != nil {
		return BootstrapResult{}, err
	}
	root, err := domain.NewRootWorkspace(cfg.WorkspaceID, rootDetails(cfg), key, a.timestamp())
	if err != nil {
		return BootstrapResult{}, err
	}
	root.Attribute(bySystem.actor, "")
	if err := a.repo.Create(ctx, root); err != nil {
		return BootstrapResult{}, fmt.Errorf("create root workspace: %w", err)
	}
	if err := a.publish(ctx, root); err != nil {
		return BootstrapResult{}, err
	}
	res.Created = true
	return res, nil
}

// reconcileRoot brings the root's name and products in line with
// configuration. Nothing manages the root, so only a hand in the store can
// have deleted it; it is restored.
func (a *App) reconcileRoot(ctx context.Context, cfg BootstrapConfig) (*domain.Workspace, error) {
	read := func() (*domain.Workspace, error) { return a.repo.Get(ctx, cfg.WorkspaceID) }
	return a.write(ctx, bySystem, read, Precondition{}, func(w *domain.Workspace) (bool, error) {
		if !w.Deleted() && w.Name() == cfg.Name && slices.Equal(w.Products(), cfg.Products) {
			return false, nil
		}
		now := a.timestamp()
		w.Undelete(now)
		return true, w.Update(domain.Changes{Name: &cfg.Name, Products: &cfg.Products}, now)
	})
}

// addRootKey makes sure the configured key pair is on the root workspace.
func (a *App) addRootKey(ctx context.Context, root *domain.Workspace, cfg BootstrapConfig) error {
	if cfg.AppKey == "" {
		return nil
	}
	if k, ok := root.KeyByAppKey(cfg.AppKey); ok {
		if subtle.ConstantTimeCompare(k.SecretDigest, a.secrets.Digest(cfg.AppKey, cfg.AppSecret)) != 1 {
			return fault.InvalidField("appKey", "already exists on the root workspace with a different secret: "+
				"rotate by configuring a new app key together with its new secret")
		}
		return nil
	}
	key, err := a.seal(cfg.AppKey, cfg.AppSecret)
	if err != nil {
		return err
	}
	if err := a.repo.ReserveAppKey(ctx, root.ID(), cfg.AppKey); errors.Is(err, domain.ErrAppKeyTaken) {
		if err := a.checkRootKeyReservation(ctx, root.ID(), cfg.AppKey); err != nil {
			return err
		}
	} else if err != nil {
		return fmt.Errorf("reserve the configured app key: %w", err)
	}
	read := func() (*domain.Workspace, error) { return a.repo.Get(ctx, root.ID()) }
	_, err = a.write(ctx, bySystem, read, Precondition{}, func(w *domain.Workspace) (bool, error) {
		if _, ok := w.KeyByAppKey(cfg.AppKey); ok {
			return false, nil
		}
		return true, w.AddBootstrapKey(key, a.timestamp())
	})
	if err != nil {
		return fmt.Errorf("add the configured key pair to the root workspace: %w", err)
	}
	return nil
}

// checkRootKeyReservation decides about a configured app key that is
// reserved but not on the root. Retired (revoked, or rotated away and
// expired): adding it back would revive a key someone retired. Reserved for
// the root and not retired: an earlier start stopped between reserving it
// and adding it, and this start finishes the job. Another workspace's: it
// is not the root's to take.
func (a *App) checkRootKeyReservation(ctx context.Context, rootID, appKey string) error {
	r, err := a.repo.AppKeyReservation(ctx, appKey)
	if err != nil {
		return fmt.Errorf("read the configured app key's reservation: %w", err)
	}
	switch {
	case r.Retired:
		return fault.InvalidField("appKey", "was revoked or rotated away from the root workspace: "+
			"configure the key pair that replaced it (or a new one)")
	case r.WorkspaceID != rootID:
		return fault.InvalidField("appKey", "belongs to another workspace: configure a new app key")
	}
	return nil
}
