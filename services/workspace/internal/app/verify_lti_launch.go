package app

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/liveproctor/workspaces/pkg/fault"
	"github.com/liveproctor/workspaces/pkg/oauth1"
	"github.com/liveproctor/workspaces/services/workspace/internal/domain"
	ltidomain "github.com/liveproctor/workspaces/services/workspace/internal/lti/domain"
)

// NonceStore remembers the nonces of verified launches, shared by every
// replica, so that a launch is used once.
type NonceStore interface {
	// Use records nonce for consumerKey for ttl. It answers false when the
	// nonce is already recorded, and a fault.Unavailable error when the
	// store cannot be reached: a replay cannot then be ruled out.
	Use(ctx context.Context, consumerKey, nonce string, ttl time.Duration) (bool, error)
}

// WithLTILaunches lets the app verify LTI launches, with nonces kept in
// nonces; their failures are counted by the app's Limits (WithLimits).
// Without it every launch is refused as unavailable.
func WithLTILaunches(nonces NonceStore) Option {
	return func(a *App) { a.nonces = nonces }
}

// LaunchRequest is a launch as the LMS sent it: the HTTP method and every
// parameter of the query then the form body, duplicates kept, decoded.
type LaunchRequest struct {
	Method string
	Params []ltidomain.LaunchParam
}

var (
	errLaunchCaller = fault.New(fault.PermissionDenied,
		"only the root workspace's key pairs may verify LTI launches (the auth service does)")
	errLaunchesOff = fault.New(fault.Unavailable,
		"LTI launches cannot be checked for replays right now; retry shortly")
)

// VerifyLTILaunch checks an LTI 1.1 basic launch for the root workspace's
// callers (the auth service, which opens a session from it): first its
// exam configuration, which a teacher sets in the LMS, so a launch that
// opens no exam uses no nonce and counts as no failure; its OAuth
// parameters and size; the consumer key, which must be the LTI key pair of
// an active workspace; its signature with that pair's secret, over the
// configured launch URL; its timestamp; its LTI parameters; and last its
// nonce, so a launch that fails a check does not use it up.
//
// An unknown or non-LTI consumer key and a wrong signature count as failed
// authentications of the client's address with that key; past the limit
// the address is refused before the key is looked up.
func (a *App) VerifyLTILaunch(ctx context.Context, caller domain.Caller, req LaunchRequest) (ltidomain.Launch, error) {
	if root := a.rootID.Load(); root == nil || caller.WorkspaceID != *root {
		return ltidomain.Launch{}, errLaunchCaller
	}
	if _, err := ltidomain.CheckExamConfig(req.Params); err != nil {
		return ltidomain.Launch{}, err
	}
	if a.nonces == nil {
		return ltidomain.Launch{}, errLaunchesOff
	}
	signed, err := ltidomain.CheckSignedLaunch(req.Method, req.Params)
	if err != nil {
		return ltidomain.Launch{}, err
	}
	if err := a.limits.CheckFailures(ctx, signed.ConsumerKey); err != nil {
		return ltidomain.Launch{}, err
	}
	launch, err := a.verifyLaunch(ctx, signed, req)
	if failedAuthentication(err) {
		a.limits.Failed(ctx, signed.ConsumerKey)
	}
	return launch, err
}

// failedAuthentication tells the errors a guessing client gets: an unknown
// key, a key that is not an LTI pair, a wrong signature.
func failedAuthentication(err error) bool {
	return errors.Is(err, ltidomain.ErrLaunchUnknownKey) || errors.Is(err, ltidomain.ErrLaunchNotLTIKey) ||
		errors.Is(err, ltidomain.ErrLaunchBadSignature)
}

func (a *App) verifyLaunch(ctx context.Context, signed ltidomain.SignedLaunch, req LaunchRequest) (ltidomain.Launch, error) {
	w, err := a.repo.GetByAppKey(ctx, signed.ConsumerKey)
	if errors.Is(err, domain.ErrNotFound) {
		return ltidomain.Launch{}, ltidomain.ErrLaunchUnknownKey
	}
	if err != nil {
		return ltidomain.Launch{}, fmt.Errorf("find the workspace of a consumer key: %w", err)
	}
	key, err := w.LTIKey(signed.ConsumerKey, a.now())
	if err != nil {
		return ltidomain.Launch{}, err
	}
	secret, err := a.secrets.Open(key.AppKey, key.SealedSecret)
	if err != nil {
		return ltidomain.Launch{}, fmt.Errorf("open the LTI secret of %s: %w", w.ID(), err)
	}
	params := make([]oauth1.Param, len(req.Params))
	for i, p := range req.Params {
		params[i] = oauth1.Param{Name: p.Name, Value: p.Value}
	}
	switch err := oauth1.Verify(req.Method, a.ltiLaunchURL(), params, secret); {
	case errors.Is(err, oauth1.ErrBadURL):
		return ltidomain.Launch{}, fmt.Errorf("the configured launch URL: %w", err)
	case err != nil:
		return ltidomain.Launch{}, ltidomain.ErrLaunchBadSignature
	}
	if err := signed.CheckFresh(a.now()); err != nil {
		return ltidomain.Launch{}, err
	}
	launch, err := ltidomain.CheckLaunch(w.ID(), key.AppKey, req.Params)
	if err != nil {
		return ltidomain.Launch{}, err
	}
	fresh, err := a.nonces.Use(ctx, key.AppKey, signed.Nonce, 2*ltidomain.LaunchMaxSkew)
	if err != nil {
		return ltidomain.Launch{}, err
	}
	if !fresh {
		return ltidomain.Launch{}, ltidomain.ErrLaunchReplayed
	}
	return launch, nil
}
