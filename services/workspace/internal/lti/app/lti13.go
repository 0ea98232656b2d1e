package app

import (
	"context"
	"crypto/rsa"
	"time"

	ltidomain "github.com/liveproctor/workspaces/services/workspace/internal/lti/domain"
)

// LTI 1.3's stores and their lifetimes, in one place: the login initiation
// (start_lti13_login.go) stores a login under its state; the launch
// (verify_lti13_launch.go) reads it, holds the browser to it, takes it
// back, once, and verifies the id_token with the platform's keys; a
// deep-linking launch keeps its request for the reply
// (create_deep_linking_response.go), a resource-link launch its record
// (LTI13LaunchRecord).

// LTI13Login is what a login initiation stores for its launch, under the
// state it hands the browser.
type LTI13Login struct {
	Nonce          string
	WorkspaceID    string
	RegistrationID string
	CreatedAt      time.Time
	// StorageTarget is the platform's storage frame when the login keeps
	// its state there (lti_storage_target): its launch must then read the
	// state and nonce back from that storage, not from a cookie.
	StorageTarget string
}

// LTI13LoginStore keeps logins until their launch, shared by every replica
// (Redis), each usable once. A launch reads its login (Get) to know how
// its browser must prove it, and takes it only once the proof holds, so
// that whoever learns a state cannot use it up for the browser it belongs
// to. A state is drawn at random and stored once, never rewritten: the
// login Take removes is the one Get read.
type LTI13LoginStore interface {
	// Put stores l under state for ttl.
	Put(ctx context.Context, state string, l LTI13Login, ttl time.Duration) error
	// Get returns the login stored under state and leaves it; ok is false
	// when there is none (never stored, used, expired).
	Get(ctx context.Context, state string) (l LTI13Login, ok bool, err error)
	// Take returns the login stored under state and removes it, in one
	// step, so that of two callers only one gets it; ok is false when
	// there is none.
	Take(ctx context.Context, state string) (l LTI13Login, ok bool, err error)
}

// LTI13DeepLink is what a deep-linking launch keeps for its reply, under
// a new id the deep-linking page posts back: everything the reply says
// but the exam, so that the browser can change nothing else.
type LTI13DeepLink struct {
	WorkspaceID    string
	RegistrationID string
	ClientID       string
	PlatformIssuer string
	DeploymentID   string
	ReturnURL      string
	Data           string
	// LineItem is whether the reply offers a line item
	// (ltidomain.DeepLinkingSettings.LineItem).
	LineItem  bool
	CreatedAt time.Time
}

// LTI13DeepLinkStore keeps deep-linking requests until their reply, shared by
// every replica (Redis), each usable once.
type LTI13DeepLinkStore interface {
	// Put stores l under id for ttl.
	Put(ctx context.Context, id string, l LTI13DeepLink, ttl time.Duration) error
	// Take returns the request stored under id and removes it, in one
	// step; ok is false when there is none (never stored, used, expired).
	Take(ctx context.Context, id string) (l LTI13DeepLink, ok bool, err error)
}

// LTI13DeepLinkTTL is how long a teacher has to pick the exam after a
// deep-linking launch.
const LTI13DeepLinkTTL = time.Hour

// PlatformKeys finds a platform's public key by kid, from the key set at
// a registration's JWKS URL (adapters/platformkeys).
type PlatformKeys interface {
	Key(ctx context.Context, registrationID, jwksURL, kid string) (*rsa.PublicKey, error)
}

// LTI13StateTTL is how long a login's state and nonce may be used. Every
// step between the login initiation and the launch takes seconds, but the
// platform may ask its user to sign in again (SSO, MFA) between our
// redirect and its answer: ten minutes leave room for that. It also bounds
// how long a flood of initiations holds the pending logins' cap
// (LTI13_PENDING_LOGINS_MAX): logins refused then succeed again within
// these ten minutes.
const LTI13StateTTL = 10 * time.Minute

// LTI13LaunchRecord is what is remembered of an accepted resource-link
// launch, under its launchId, for the vendor's back end to grade it and
// read its class later: who launched what, where, and the Advantage
// services the platform offered.
type LTI13LaunchRecord struct {
	ID             string
	WorkspaceID    string
	RegistrationID string
	DeploymentID   string
	ContextID      string
	ResourceLinkID string
	Subject        string
	Email          string
	Roles          []string
	Services       ltidomain.LTI13Services
	// ExamConfigID is the exam configuration launched: the resourceId of
	// the line item a score finds or makes for the resource link, as Deep
	// Linking offers it. Empty for launches remembered before it was kept.
	ExamConfigID string
	LaunchedAt   time.Time
}

// LTI13LaunchSession is how long the session a launch opens lasts (the
// auth service's token, 8 hours): its record is kept that long and a grace
// after it.
const LTI13LaunchSession = 8 * time.Hour

// LTI13LaunchStore keeps launch records, shared by every replica
// (MongoDB), for the retention it was built with (the session's 8 hours
// and LTI_LAUNCH_GRACE).
type LTI13LaunchStore interface {
	// Put keeps r under r.ID, drawn at random.
	Put(ctx context.Context, r LTI13LaunchRecord) error
	// Get returns workspace workspaceID's launch id; ok is false when
	// there is none (unknown, past the retention, another workspace's).
	Get(ctx context.Context, workspaceID, id string) (r LTI13LaunchRecord, ok bool, err error)
}
