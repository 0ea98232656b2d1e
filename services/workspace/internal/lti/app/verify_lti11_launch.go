package app

import (
	"context"
	"errors"
	"fmt"
	"time"

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

// FailureLimits counts launches' failed authentications, against the
// client's address and what the launch names (the service's Limits, the
// same that Admit counts a key pair's failures with).
type FailureLimits interface {
	// CheckFailures refuses the call's client address when it has failed
	// to authenticate too often lately, with key or at all.
	CheckFailures(ctx context.Context, key string) error
	// Failed counts a failed authentication of the call's client address
	// with key.
	Failed(ctx context.Context, key string)
}

// LTI11Launches verifies LTI 1.1 launches: it needs the workspaces holding
// LTI key pairs, the nonces of launches already used, and the failure
// limits.
type LTI11Launches struct {
	ws     Workspaces
	nonces NonceStore
	limits FailureLimits
	s      Settings
}

// NewLTI11Launches returns the LTI 1.1 launch's use case.
func NewLTI11Launches(ws Workspaces, nonces NonceStore, limits FailureLimits, s Settings) *LTI11Launches {
	notNil(ws, nonces, limits)
	return &LTI11Launches{ws: ws, nonces: nonces, limits: limits, s: s.withDefaults()}
}

// LaunchRequest is a launch as the LMS sent it: the HTTP method and every
// parameter of the query then the form body, duplicates kept, decoded.
type LaunchRequest struct {
	Method string
	Params []ltidomain.LaunchParam
}

// Verify checks an LTI 1.1 basic launch for the root workspace's
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
func (l *LTI11Launches) Verify(ctx context.Context, caller domain.Caller, req LaunchRequest) (ltidomain.Launch, error) {
	if !l.ws.IsRoot(caller) {
		return ltidomain.Launch{}, errLaunchCaller
	}
	if _, err := ltidomain.CheckExamConfig(req.Params); err != nil {
		return ltidomain.Launch{}, err
	}
	signed, err := ltidomain.CheckSignedLaunch(req.Method, req.Params)
	if err != nil {
		return ltidomain.Launch{}, err
	}
	if err := l.limits.CheckFailures(ctx, signed.ConsumerKey); err != nil {
		return ltidomain.Launch{}, err
	}
	launch, err := l.verify(ctx, signed, req)
	if failedAuthentication(err) {
		l.limits.Failed(ctx, signed.ConsumerKey)
	}
	return launch, err
}

// failedAuthentication tells the errors a guessing client gets: an unknown
// key, a key that is not an LTI pair, a wrong signature.
func failedAuthentication(err error) bool {
	return errors.Is(err, ltidomain.ErrLaunchUnknownKey) || errors.Is(err, ltidomain.ErrLaunchNotLTIKey) ||
		errors.Is(err, ltidomain.ErrLaunchBadSignature)
}

func (l *LTI11Launches) verify(ctx context.Context, signed ltidomain.SignedLaunch, req LaunchRequest) (ltidomain.Launch, error) {
	w, err := l.ws.ByConsumerKey(ctx, signed.ConsumerKey)
	if errors.Is(err, domain.ErrNotFound) {
		return ltidomain.Launch{}, ltidomain.ErrLaunchUnknownKey
	}
	if err != nil {
		return ltidomain.Launch{}, fmt.Errorf("find the workspace of a consumer key: %w", err)
	}
	key, err := w.LTIKey(signed.ConsumerKey, l.s.Now())
	if err != nil {
		return ltidomain.Launch{}, err
	}
	secret, err := l.ws.OpenSecret(key)
	if err != nil {
		return ltidomain.Launch{}, fmt.Errorf("open the LTI secret of %s: %w", w.ID(), err)
	}
	params := make([]oauth1.Param, len(req.Params))
	for i, p := range req.Params {
		params[i] = oauth1.Param{Name: p.Name, Value: p.Value}
	}
	switch err := oauth1.Verify(req.Method, l.s.URLs.LTI11Launch(), params, secret); {
	case errors.Is(err, oauth1.ErrBadURL):
		return ltidomain.Launch{}, fmt.Errorf("the configured launch URL: %w", err)
	case err != nil:
		return ltidomain.Launch{}, ltidomain.ErrLaunchBadSignature
	}
	if err := signed.CheckFresh(l.s.Now()); err != nil {
		return ltidomain.Launch{}, err
	}
	launch, err := ltidomain.CheckLaunch(w.ID(), key.AppKey, req.Params)
	if err != nil {
		return ltidomain.Launch{}, err
	}
	fresh, err := l.nonces.Use(ctx, key.AppKey, signed.Nonce, 2*ltidomain.LaunchMaxSkew)
	if err != nil {
		return ltidomain.Launch{}, err
	}
	if !fresh {
		return ltidomain.Launch{}, ltidomain.ErrLaunchReplayed
	}
	// The LTI pair authenticates no API call: its launches are its uses,
	// which tell an administrator whether an LMS still launches over 1.1.
	l.ws.KeyUsed(key.AppKey)
	return launch, nil
}
