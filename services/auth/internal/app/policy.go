package app

import (
	"context"
	"strings"

	"github.com/liveproctor/workspaces/pkg/basicauth"
	"github.com/liveproctor/workspaces/pkg/fault"
	"github.com/liveproctor/workspaces/pkg/ratelimit"
	"github.com/liveproctor/workspaces/services/auth/internal/domain"
)

// This file is the auth service's policy: who may call, and how often.
// Every operation goes through it, in this order:
//
//  1. failures: a client address that has failed to authenticate too
//     often lately, with the app key it presents or at all, is refused
//     before anything else is looked at (admit);
//  2. credentials: a key pair must be allowed to act for the workspace
//     (grant, which asks the workspace service and remembers a yes for
//     AccessCacheTTL, see access.go); a token must be live;
//  3. rate: a key pair's calls count against its workspace's own limit or
//     the default (grant); a token's calls against the default, per token
//     (admit);
//  4. the use case;
//  5. a token that turns out not to be live counts as a failure of the
//     address (settle).
//
// Key pairs' failed authentications are counted by the workspace service,
// which checks them. The counters themselves are kept behind Limits (on
// Redis, pkg/ratelimit); a login whose access is remembered runs steps 1
// and 3 and its token's save as one step of the store (LoginStore).

// operation names a use case, for the policy.
type operation int

const (
	opCreateToken operation = iota
	opRevokeUser
	opRevokeWorkspace
	opRevokeToken
	opIntrospectToken
	opForgetKeyPairs
	opCreateLTISession
	opCreateLTI13Session
	opSession
	opEndSession
	opCount
)

// presents is what the caller of an operation presents.
type presents int

const (
	// keyPair: Authorization: Basic, checked for the workspace by grant.
	keyPair presents = iota
	// bearerToken: Authorization: Bearer with a token login handed out.
	bearerToken
	// launch: an LTI launch, which the workspace service verifies and
	// whose failures it counts against the consumer key (LTI 1.1) or the
	// platform's issuer and client (LTI 1.3).
	launch
)

// operations is the one list of what each operation's caller presents,
// and so which steps of the policy it goes through.
var operations = [opCount]presents{
	opCreateToken:        keyPair,
	opRevokeUser:         keyPair,
	opRevokeWorkspace:    keyPair,
	opRevokeToken:        keyPair,
	opIntrospectToken:    keyPair,
	opForgetKeyPairs:     keyPair,
	opCreateLTISession:   launch,
	opCreateLTI13Session: launch,
	opSession:            bearerToken,
	opEndSession:         bearerToken,
}

// RateLimit is a workspace's own rate limit for its key pairs: PerSecond
// calls a second on average, up to Burst at once. The zero value means it
// has none of its own, and the service's default applies.
type RateLimit struct {
	PerSecond, Burst int
}

// limit is r as the limits count it (Off when it has none).
func (r RateLimit) limit() ratelimit.Limit {
	return ratelimit.Limit{Rate: r.PerSecond, Burst: r.Burst}
}

// Limits keeps the counters the policy decides with; *ratelimit.Guard is
// one. Over a limit, the error is Throttled, and the answer carries the
// rate-limit fields.
type Limits interface {
	// CheckFailures refuses a client address that has failed to
	// authenticate too often lately, with appKey or at all.
	CheckFailures(ctx context.Context, appKey string) error
	// Failed counts a failed authentication of the client's address with
	// appKey (empty for a token).
	Failed(ctx context.Context, appKey string)
	// LimitKeyPair counts a call of a key pair whose credentials were
	// accepted: against own when its workspace has one, else the default.
	LimitKeyPair(ctx context.Context, appKey string, own ratelimit.Limit) error
	// LimitToken counts a call presenting an SDK token, per token,
	// against the default limit.
	LimitToken(ctx context.Context, token string) error
}

// LoginLimits are the limits of a login whose access is already known
// good: the failures of the client's address with AppKey, then the rate
// of the key pair (Own, or the default).
type LoginLimits struct {
	AppKey string
	Own    ratelimit.Limit
}

// LoginStore is a token store that can run a login's limits and the save
// of its token as one step, with the outcomes Limits would give, saving
// nothing when they refuse. On Redis it is one round trip instead of
// three; the application uses it when the store offers it.
type LoginStore interface {
	SaveLogin(ctx context.Context, d domain.Digest, s domain.Session, limits LoginLimits) error
}

// noLimits limits nothing.
type noLimits struct{}

func (noLimits) CheckFailures(context.Context, string) error                 { return nil }
func (noLimits) Failed(context.Context, string)                              {}
func (noLimits) LimitKeyPair(context.Context, string, ratelimit.Limit) error { return nil }
func (noLimits) LimitToken(context.Context, string) error                    { return nil }

var errNoBearer = fault.New(fault.Unauthenticated,
	"missing token: send Authorization: Bearer <auth> with the auth value of POST /api/login/sdk")

// admit runs the policy's first step for op, and for a token its rate
// (step 3): it answers the token presented, if op takes one.
func (a *App) admit(ctx context.Context, op operation, authorization string) (domain.Token, error) {
	if operations[op] != bearerToken {
		appKey, _, _ := basicauth.Parse(authorization)
		return "", a.limits.CheckFailures(ctx, appKey)
	}
	if err := a.limits.CheckFailures(ctx, ""); err != nil {
		return "", err
	}
	token, err := bearer(authorization)
	if err != nil {
		return "", err
	}
	return token, a.limits.LimitToken(ctx, string(token))
}

// settle is the policy's last step for op: a token that was not live
// counts as a failure of the client's address.
func (a *App) settle(ctx context.Context, op operation, err error) error {
	if operations[op] == bearerToken && fault.KindOf(err) == fault.Unauthenticated {
		a.limits.Failed(ctx, "")
	}
	return err
}

// grant is steps 2 and 3 for a key pair: the credentials must be allowed
// to act for the workspace (and it must be live, when live is set), and the
// call counts against the key pair's rate. Credentials that are good but
// not for this workspace still count against the default rate.
func (a *App) grant(ctx context.Context, authorization, workspaceID string, live bool) (WorkspaceStatus, error) {
	appKey, _, _ := basicauth.Parse(authorization)
	st, err := a.access(ctx, authorization, appKey, workspaceID)
	if k := fault.KindOf(err); k == fault.NotFound || k == fault.PermissionDenied {
		if lerr := a.limits.LimitKeyPair(ctx, appKey, ratelimit.Limit{}); lerr != nil {
			return WorkspaceStatus{}, lerr
		}
		return WorkspaceStatus{}, err
	}
	if err != nil {
		return WorkspaceStatus{}, err
	}
	if err := a.limits.LimitKeyPair(ctx, appKey, st.CallerLimit.limit()); err != nil {
		return WorkspaceStatus{}, err
	}
	if live && !st.Active {
		return WorkspaceStatus{}, fault.New(fault.NotFound, "workspace %q not found", workspaceID)
	}
	return st, nil
}

// bearer returns the token of an Authorization: Bearer header.
func bearer(authorization string) (domain.Token, error) {
	scheme, token, ok := strings.Cut(authorization, " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") || strings.TrimSpace(token) == "" {
		return "", errNoBearer
	}
	return domain.Token(strings.TrimSpace(token)), nil
}
