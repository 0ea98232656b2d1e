package app

import (
	"context"

	"github.com/liveproctor/workspaces/pkg/fault"
	"github.com/liveproctor/workspaces/pkg/ratelimit"
	"github.com/liveproctor/workspaces/services/workspace/internal/domain"
)

// This file is the service's one policy for who may call what and how
// often: every call goes through Admit, and every limit it applies (and
// those of LTI launches) goes through Limits.

// Limits bounds the calls of the service; *ratelimit.Guard is one. A refusal is a fault.Throttled error, or
// fault.Unavailable when every anonymous caller together is over the limit.
type Limits interface {
	// LimitAnonymous counts an anonymous call against its client address's
	// limit and the limit of all addresses together.
	LimitAnonymous(ctx context.Context) error
	// CheckFailures refuses the call's client address when it has failed
	// to authenticate too often lately, with appKey or at all. It comes
	// before any credential check.
	CheckFailures(ctx context.Context, appKey string) error
	// Failed counts a failed authentication of the call's client address
	// with appKey.
	Failed(ctx context.Context, appKey string)
	// LimitKeyPair counts a call of an authenticated key pair against own,
	// its workspace's limit, or the service's default when own is Off.
	LimitKeyPair(ctx context.Context, appKey string, own ratelimit.Limit) error
}

// WithLimits bounds calls (Admit) by limits; without it nothing is
// limited or counted. (The LTI launches count their failures with the
// same limits, given to them by the service's wiring.)
func WithLimits(limits Limits) Option { return func(a *App) { a.limits = limits } }

// noLimits limits nothing.
type noLimits struct{}

func (noLimits) LimitAnonymous(context.Context) error                        { return nil }
func (noLimits) CheckFailures(context.Context, string) error                 { return nil }
func (noLimits) Failed(context.Context, string)                              {}
func (noLimits) LimitKeyPair(context.Context, string, ratelimit.Limit) error { return nil }

// ownLimit is a workspace's own limit as Limits counts it: Off, so that the
// default applies, when it has none.
func ownLimit(own *domain.RateLimit) ratelimit.Limit {
	if own == nil {
		return ratelimit.Limit{}
	}
	return ratelimit.Limit{Rate: own.PerSecond, Burst: own.Burst}
}

// rule is what an operation asks of its callers. The zero rule is the
// strictest: credentials, the REST-access tag and the rate limit.
type rule struct {
	// public: no credentials are asked for, and any sent are not looked
	// at, so they are neither counted as failures nor rate limited, and
	// the operation sees no caller.
	public bool
	// anyKeyPair: key pairs without the REST-access tag may call it.
	anyKeyPair bool
	// unlimited: calls are not counted against the key pair's rate limit.
	unlimited bool
	// anonymous: the call is made on behalf of a client no credentials
	// admit (a browser or a platform): it counts against its address's
	// limit and the total of all addresses, before anything else is done.
	anonymous bool
}

// operations are the service's operations (its gRPC methods' names) and
// each one's rule; an operation missing here gets the zero rule.
var operations = map[string]rule{
	"ListWorkspaces":      {},
	"GetWorkspace":        {},
	"CreateWorkspace":     {},
	"UpdateWorkspace":     {},
	"DeleteWorkspace":     {},
	"UndeleteWorkspace":   {},
	"ListWorkspaceKeys":   {},
	"CreateWorkspaceKey":  {},
	"RotateWorkspaceKey":  {},
	"RevokeWorkspaceKey":  {},
	"ListWorkspaceEvents": {},

	"ListLtiRegistrations":  {},
	"CreateLtiRegistration": {},
	"GetLtiRegistration":    {},
	"DeleteLtiRegistration": {},
	"AddLtiDeployment":      {},
	"RemoveLtiDeployment":   {},
	// A registration link is made like a registration.
	"CreateLtiRegistrationLink": {},
	// A launch is read like a registration.
	"GetLtiLaunch": {},
	// So is its roster, which the platform answers.
	"ListLtiLaunchMembers": {},
	// A score for it is sent, and read, by the same callers.
	"SubmitLtiScore": {},
	"GetLtiScore":    {},

	// Webhooks follow the rule of key pairs, as LTI registrations do.
	"ListWebhooks":         {},
	"CreateWebhook":        {},
	"GetWebhook":           {},
	"UpdateWebhook":        {},
	"DeleteWebhook":        {},
	"RotateWebhookSecret":  {},
	"ListWebhookAttempts":  {},
	"ResendWebhookEvent":   {},
	"RecoverWebhookEvents": {},
	"TestWebhook":          {},

	// Links to the administrator's portal are made and revoked like
	// registration links.
	"CreatePortalLink": {},
	"RevokePortalLink": {},
	// The portal's session answers for itself.
	"GetPortalSession": {},

	// The other services call these to check a caller on behalf of a
	// request they count themselves; limiting them again would count one
	// request twice (and every session check against the auth service's
	// own key pair).
	//
	// Authenticate also answers key pairs without the REST-access tag
	// (LTI key pairs): it reports who they belong to.
	"Authenticate":       {anyKeyPair: true, unlimited: true},
	"GetWorkspaceStatus": {unlimited: true},
	// Every school's launches would otherwise share the auth service's key
	// pair's limit; a launch's own failures are counted against its
	// consumer key and the LMS's address (ltiapp.LTI11Launches). The auth
	// service forwards the browser's address: the launch counts against
	// the anonymous limits as the browser's.
	"VerifyLtiLaunch": {unlimited: true, anonymous: true},
	// The same for LTI 1.3 launches: their failures are counted against
	// the platform's registration and the browser's address.
	"VerifyLti13Launch": {unlimited: true, anonymous: true},
	// The logout it records was counted.
	"RecordSessionRevocation": {unlimited: true},

	// An LMS fetches a workspace's LTI configuration anonymously. Keep the
	// public operations few: anyone can call each.
	"GetLtiConfiguration": {public: true, anonymous: true},
	// An LMS user's browser starts an LTI 1.3 login, and platforms fetch
	// the tool's public keys, anonymously.
	"StartLti13Login": {public: true, anonymous: true},
	"GetLtiToolKeys":  {public: true, anonymous: true},
	// The teacher's browser sends the deep-linking page's pick; the
	// single-use, unguessable id a verified launch handed it is what
	// admits the call.
	"CreateLtiDeepLinkingResponse": {public: true, anonymous: true},
	// A platform sends the administrator's browser with a registration
	// link: the link (single-use, unguessable) is the credential.
	"RegisterLtiPlatform": {public: true, anonymous: true},
	// The vendor sends the administrator's browser with a portal link: the
	// link (single-use, unguessable) is the credential.
	"OpenPortalLink": {public: true, anonymous: true},
}

// Credentials are the key pair a call presents; zero when it presents none.
type Credentials struct {
	AppKey    string
	AppSecret string
}

var (
	errNoCredentials = fault.New(fault.Unauthenticated,
		"missing credentials: send Authorization: Basic base64(appKey:appSecret)")
	errNoAPIAccess = fault.New(fault.PermissionDenied,
		"this key pair may not call the API: it lacks the allow-rest-api-access tag (LTI key pairs are for LTI launches)")
)

// Admit puts a call of operation through the policy and returns the caller
// the use case then acts for. In order: an anonymous operation counts
// against its client address's limit and the total; an address with too
// many recent failures is refused before its credentials are looked at; the
// credentials are checked, and a failure is counted against the address;
// a key pair without the REST-access tag is refused unless the operation
// takes any key pair; then the key pair's rate limit applies, its
// workspace's own or the default, unless the operation is unlimited. A
// public operation skips all of it and has no caller.
func (a *App) Admit(ctx context.Context, operation string, creds Credentials) (domain.Caller, error) {
	r := operations[operation]
	if r.anonymous {
		if err := a.limits.LimitAnonymous(ctx); err != nil {
			return domain.Caller{}, err
		}
	}
	if r.public {
		return domain.Caller{}, nil
	}
	if creds.AppKey == "" {
		return domain.Caller{}, errNoCredentials
	}
	if err := a.limits.CheckFailures(ctx, creds.AppKey); err != nil {
		return domain.Caller{}, err
	}
	caller, err := a.Authenticate(ctx, creds.AppKey, creds.AppSecret)
	if fault.KindOf(err) == fault.Unauthenticated {
		a.limits.Failed(ctx, creds.AppKey)
	}
	if err != nil {
		return domain.Caller{}, err
	}
	if !caller.RESTAccess && !r.anyKeyPair {
		return domain.Caller{}, errNoAPIAccess
	}
	if !r.unlimited {
		if err := a.limits.LimitKeyPair(ctx, creds.AppKey, ownLimit(caller.RateLimit)); err != nil {
			return domain.Caller{}, err
		}
	}
	return caller, nil
}
