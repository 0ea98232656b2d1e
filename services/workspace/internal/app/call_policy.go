package app

import (
	"context"
	"errors"
	"fmt"

	"github.com/liveproctor/workspaces/pkg/fault"
	"github.com/liveproctor/workspaces/pkg/ratelimit"
	"github.com/liveproctor/workspaces/services/workspace/internal/domain"
	portaldomain "github.com/liveproctor/workspaces/services/workspace/internal/portal/domain"
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

// PortalSessions finds the portal link whose session a token names, for
// the policy: the portal context's session check (portalapp.Sessions). An
// unknown, revoked or ended session is portaldomain.ErrSessionOver.
type PortalSessions interface {
	Check(ctx context.Context, token string) (portaldomain.Link, error)
}

// WithPortalSessions admits the administrator's portal sessions (the
// portal-session metadata) to the operations that take them; without it
// every session is refused as over.
func WithPortalSessions(s PortalSessions) Option { return func(a *App) { a.portal = s } }

// noPortalSessions knows no session.
type noPortalSessions struct{}

func (noPortalSessions) Check(context.Context, string) (portaldomain.Link, error) {
	return portaldomain.Link{}, portaldomain.ErrSessionOver
}

// portalAccess says whether an administrator's portal session may call an
// operation.
type portalAccess uint8

const (
	// noPortal: key pairs only (the zero value).
	noPortal portalAccess = iota
	// portalToo: a portal session may call it, for its own workspace.
	portalToo
	// portalOnly: only a portal session may call it.
	portalOnly
)

// rule is what an operation asks of its callers. The zero rule is the
// strictest: credentials (a key pair), the REST-access tag and the rate
// limit.
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
	// portal: whether an administrator's portal session may call it, which
	// the portal's pages do for their workspace.
	portal portalAccess
}

// operations are the service's operations (its gRPC methods' names) and
// each one's rule; an operation missing here gets the zero rule.
//
// The administrator's portal (a portal session) reads its workspace, its
// key pairs (rotated and revoked there) and its audit trail, and sets up
// LTI 1.3: the registrations, made by hand or through a registration link,
// and their deployments.
var operations = map[string]rule{
	"ListWorkspaces":      {},
	"GetWorkspace":        {portal: portalToo},
	"CreateWorkspace":     {},
	"UpdateWorkspace":     {},
	"DeleteWorkspace":     {},
	"UndeleteWorkspace":   {},
	"ListWorkspaceKeys":   {portal: portalToo},
	"CreateWorkspaceKey":  {},
	"RotateWorkspaceKey":  {portal: portalToo},
	"RevokeWorkspaceKey":  {portal: portalToo},
	"ListWorkspaceEvents": {portal: portalToo},

	"ListLtiRegistrations":  {portal: portalToo},
	"CreateLtiRegistration": {portal: portalToo},
	"GetLtiRegistration":    {portal: portalToo},
	"DeleteLtiRegistration": {portal: portalToo},
	"AddLtiDeployment":      {portal: portalToo},
	"RemoveLtiDeployment":   {portal: portalToo},
	// A registration link is made like a registration.
	"CreateLtiRegistrationLink": {portal: portalToo},
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
	// registration links; in the portal, revoking the session's own link
	// is signing out.
	"CreatePortalLink": {},
	"RevokePortalLink": {portal: portalToo},
	// The portal's session answers for itself.
	"GetPortalSession": {portal: portalOnly},

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

// Credentials are what a call presents: a key pair, or the token of an
// administrator's portal session; zero when it presents none.
type Credentials struct {
	AppKey    string
	AppSecret string
	// PortalSession is the portal-session metadata: the token of a portal
	// session, which the gateway's portal pages send (never a REST
	// client's: the gateway forwards no such header).
	PortalSession string
}

var (
	errNoCredentials = fault.New(fault.Unauthenticated,
		"missing credentials: send Authorization: Basic base64(appKey:appSecret)")
	errNoPortalSession = fault.New(fault.Unauthenticated,
		"missing credentials: send the portal session's token as portal-session metadata")
	errNoAPIAccess = fault.New(fault.PermissionDenied,
		"this key pair may not call the API: it lacks the allow-rest-api-access tag (LTI key pairs are for LTI launches)")
	// A call presents one credential, as RFC 6750 asks of bearer tokens
	// (more than one method is invalid_request, 400).
	errTwoCredentials = fault.New(fault.Invalid,
		"send either Basic credentials or a portal session, not both")
)

// portalFailures is what a failed portal session counts against, beside
// the client address's failures at all: sessions name no app key.
const portalFailures = "portal-session"

// portalLimitKey is what a portal session's calls count against: a key of
// the session's own, under its workspace's limit, like a key pair's.
func portalLimitKey(linkID string) string { return "portal:" + linkID }

// Admit puts a call of operation through the policy and returns the caller
// the use case then acts for. In order: an anonymous operation counts
// against its client address's limit and the total; an address with too
// many recent failures is refused before its credentials are looked at; the
// credentials are checked, and a failure is counted against the address;
// a key pair without the REST-access tag is refused unless the operation
// takes any key pair; then the key pair's rate limit applies, its
// workspace's own or the default, unless the operation is unlimited. A
// portal session goes through the same steps (admitPortal). A public
// operation skips all of it and has no caller.
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
	if creds.PortalSession != "" {
		if creds.AppKey != "" {
			return domain.Caller{}, errTwoCredentials
		}
		return a.admitPortal(ctx, operation, r, creds.PortalSession)
	}
	if creds.AppKey == "" && r.portal == portalOnly {
		return domain.Caller{}, errNoPortalSession
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
	if r.portal == portalOnly {
		return domain.Caller{}, fault.New(fault.PermissionDenied, "only a portal session may call %s", operation)
	}
	if !r.unlimited {
		if err := a.limits.LimitKeyPair(ctx, creds.AppKey, ownLimit(caller.RateLimit)); err != nil {
			return domain.Caller{}, err
		}
	}
	return caller, nil
}

// admitPortal puts a call presenting a portal session token through the
// policy's steps: the address's failures; the session (portalCaller), a
// failure counted against the address; whether the operation takes a
// session; the rate, under a key of the session's own and its workspace's
// limit, unless the operation is unlimited.
func (a *App) admitPortal(ctx context.Context, operation string, r rule, token string) (domain.Caller, error) {
	if err := a.limits.CheckFailures(ctx, portalFailures); err != nil {
		return domain.Caller{}, err
	}
	caller, err := a.portalCaller(ctx, token)
	if fault.KindOf(err) == fault.Unauthenticated {
		a.limits.Failed(ctx, portalFailures)
	}
	if err != nil {
		return domain.Caller{}, err
	}
	if r.portal == noPortal {
		return domain.Caller{}, fault.New(fault.PermissionDenied,
			"a portal session may not call %s: it reads and sets up its own workspace only", operation)
	}
	if !r.unlimited {
		if err := a.limits.LimitKeyPair(ctx, portalLimitKey(caller.PortalLinkID), ownLimit(caller.RateLimit)); err != nil {
			return domain.Caller{}, err
		}
	}
	return caller, nil
}

// portalCaller is the caller a portal session's token stands for: the
// portal's check finds the link that admits it, and the link must still
// stand for its workspace (active, and neither deleted nor undeleted since
// the link was made), whose own rate limit it takes. Nothing of it is
// cached: a revocation or a delete ends the session at its next call.
func (a *App) portalCaller(ctx context.Context, token string) (domain.Caller, error) {
	link, err := a.portal.Check(ctx, token)
	if err != nil {
		return domain.Caller{}, err
	}
	w, err := a.repo.Get(ctx, link.WorkspaceID)
	switch {
	case errors.Is(err, domain.ErrNotFound):
		return domain.Caller{}, portaldomain.ErrSessionOver
	case err != nil:
		return domain.Caller{}, fmt.Errorf("get the portal session's workspace: %w", err)
	case !link.Current(!w.Deleted(), w.TokenCutoff()):
		return domain.Caller{}, portaldomain.ErrSessionOver
	}
	caller := domain.Caller{WorkspaceID: w.ID(), PortalLinkID: link.ID, RESTAccess: true}
	if own, ok := w.RateLimit(); ok {
		caller.RateLimit = &own
	}
	return caller, nil
}
