package app

import (
	"context"
	"crypto/rsa"
	"time"

	"github.com/liveproctor/workspaces/services/workspace/internal/domain"
)

// LTI 1.3's dependencies and settings, in one place: the login initiation
// (start_lti13_login.go) stores a login under its state; the launch
// (verify_lti13_launch.go) takes it back, once, and verifies the id_token
// with the platform's keys; the tool's keys sign the tool's messages and
// are published as its JWKS (lti_tool_keys.go).

// Lti13Login is what a login initiation stores for its launch, under the
// state it hands the browser.
type Lti13Login struct {
	Nonce          string
	WorkspaceID    string
	RegistrationID string
	CreatedAt      time.Time
}

// Lti13Logins keeps logins until their launch, shared by every replica
// (Redis), each usable once.
type Lti13Logins interface {
	// Put stores l under state for ttl.
	Put(ctx context.Context, state string, l Lti13Login, ttl time.Duration) error
	// Take returns the login stored under state and removes it, in one
	// step; ok is false when there is none (never stored, used, expired).
	Take(ctx context.Context, state string) (l Lti13Login, ok bool, err error)
}

// PlatformKeys finds a platform's public key by kid, from the key set at
// a registration's JWKS URL (adapters/platformkeys).
type PlatformKeys interface {
	Key(ctx context.Context, registrationID, jwksURL, kid string) (*rsa.PublicKey, error)
}

// Lti13StateTTL is how long a login's state and nonce may be used: longer
// than any platform takes between its login initiation and the launch, and
// than the id_tokens platforms issue live.
const Lti13StateTTL = time.Hour

// lti13 is what LTI 1.3 needs; nil fields turn the part that needs them off.
type lti13 struct {
	logins   Lti13Logins
	keys     PlatformKeys
	tool     *toolKeys // made by New from toolStore and rotation
	toolKeys domain.ToolKeyStore
	rotation domain.ToolKeyRotation
}

// WithLTI13 lets the app serve LTI 1.3: logins kept in logins, platforms'
// keys from keys, and the tool's own keys in store, sealed by the app's
// secret box, rotated by rotation.
func WithLTI13(logins Lti13Logins, keys PlatformKeys, store domain.ToolKeyStore, rotation domain.ToolKeyRotation) Option {
	return func(a *App) {
		a.lti13 = lti13{logins: logins, keys: keys, toolKeys: store, rotation: rotation}
	}
}

// lti13LaunchURL is the LTI 1.3 launch URL: the redirect URI registered
// with platforms and the target link of every launch.
func (a *App) lti13LaunchURL() string { return a.ltiBase() + "/lti/v1p3/launch" }

// lti13LoginURL is the OIDC login initiation URL platforms are given.
func (a *App) lti13LoginURL() string { return a.ltiBase() + "/lti/v1p3/login" }

// lti13JWKSURL is where platforms read the tool's public keys.
func (a *App) lti13JWKSURL() string { return a.ltiBase() + "/lti/v1p3/jwks.json" }
