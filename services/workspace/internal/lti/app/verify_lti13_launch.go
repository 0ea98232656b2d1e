package app

import (
	"context"
	"crypto/subtle"
	"encoding/base64"
	"errors"
	"fmt"
	"strings"

	"github.com/liveproctor/workspaces/pkg/fault"
	"github.com/liveproctor/workspaces/pkg/ident"
	"github.com/liveproctor/workspaces/pkg/jose"
	"github.com/liveproctor/workspaces/services/workspace/internal/domain"
	ltidomain "github.com/liveproctor/workspaces/services/workspace/internal/lti/domain"
)

// What PlatformKeys.Key answers when it has no key to give; an adapter's
// errors match one of these (errors.Is), or are anything else for a bug.
var (
	// ErrPlatformKeyNotFound: the platform's key set has no key of the
	// token's kid, even after the refetch its cache allowed.
	ErrPlatformKeyNotFound = errors.New("the platform's key set has no key with the token's kid")
	// ErrPlatformKeysUnavailable: no key set is held and the platform's
	// JWKS URL could not be read.
	ErrPlatformKeysUnavailable = errors.New("the platform's key set could not be fetched")
)

// The refusals of an LTI 1.3 launch before its claims are read (those are
// ltidomain.CheckIDToken's). They are for the administrator or teacher who
// sees the page: each says what went wrong and what to do.
var (
	errLTI13NoToken     = fault.New(fault.Invalid, "the launch has no id_token: the platform must post id_token and state to the launch URL")
	errLTI13NoState     = fault.New(fault.Invalid, "the launch has no state: the platform must post id_token and state to the launch URL")
	errLTI13State       = fault.New(fault.Unauthenticated, "the launch's state is not this browser's (open the link again from the LMS)")
	errLTI13StateUnused = fault.New(fault.Unauthenticated,
		"the launch's state is unknown, already used or expired (a reloaded or replayed launch): open the link again from the LMS")
	errLTI13Malformed = fault.New(fault.Invalid, "the id_token is not a well-formed JWT (three base64url parts, a JSON header and claims)")
	errLTI13TooLarge  = fault.New(fault.Invalid, "the id_token is larger than %d KiB", jose.MaxTokenSize>>10)
	errLTI13Alg       = fault.New(fault.Unauthenticated, "the id_token must be signed with RS256; it is unsigned (alg none) or uses another algorithm")
	errLTI13Crit      = fault.New(fault.Unauthenticated, "the id_token's header has critical extensions (crit), which this tool does not support")
	errLTI13NoKID     = fault.New(fault.Unauthenticated, "the id_token's header has no kid: the platform must name the key it signed with")
	errLTI13OtherReg  = fault.New(fault.Unauthenticated,
		"the id_token's issuer and client_id are not those of the login that started this launch: open the link again from the LMS")
	errLTI13Deleted = fault.New(fault.Unauthenticated, "the workspace of this LTI registration has been deleted: ask your vendor to restore it")
	errLTI13KID     = fault.New(fault.Unauthenticated,
		"key not found: the platform's key set (the registration's jwksUrl) has no key with the id_token's kid")
	errLTI13KeysDown = fault.New(fault.Unavailable,
		"the platform's public keys could not be fetched from the registration's jwksUrl: check that it answers, then launch again")
	errLTI13Signature = fault.New(fault.Unauthenticated, "the id_token's signature does not verify with the platform's key of its kid")
)

// LTI13BrowserProof is what a launch's browser presents to show that it
// started the login: the state its cookie kept, or the state and nonce
// the launch page read back from the platform's storage (FromStorage). A
// login with platform storage is proven that way only, any other login by
// its cookie.
type LTI13BrowserProof struct {
	State       string
	Nonce       string
	FromStorage bool
}

// lti13FailureKey is what a launch's failed authentications are counted
// against when its issuer and client are unknown.
const lti13FailureKey = "lti13"

// LTI13Launches verifies LTI 1.3 launches: it needs the workspaces holding
// registrations, the logins the launches finish, the platforms' keys, the
// store a deep-linking launch keeps its request in, the one a
// resource-link launch is remembered in, the failure limits, and the
// registrations' launch health.
type LTI13Launches struct {
	ws        Workspaces
	logins    LTI13LoginStore
	keys      PlatformKeys
	deepLinks LTI13DeepLinkStore
	records   LTI13LaunchStore
	limits    FailureLimits
	health    launchHealth
	s         Settings
}

// NewLTI13Launches returns the LTI 1.3 launch's use case.
func NewLTI13Launches(ws Workspaces, logins LTI13LoginStore, keys PlatformKeys, deepLinks LTI13DeepLinkStore, records LTI13LaunchStore,
	limits FailureLimits, health LaunchHealthStore, s Settings) *LTI13Launches {
	notNil(ws, logins, keys, deepLinks, records, limits, health)
	s = s.withDefaults()
	return &LTI13Launches{ws: ws, logins: logins, keys: keys, deepLinks: deepLinks, records: records, limits: limits,
		health: newLaunchHealth(health, s), s: s}
}

// errLTI13NotRecorded refuses a launch whose record could not be kept: it
// could never be graded, and the platform's user can launch again.
const errLTI13NotRecorded = "the launch could not be recorded for grading (the tool's store is unavailable): open the link again from the LMS in a moment"

// Verify checks an LTI 1.3 launch for the root workspace's
// callers (the auth service, which opens a session from it): the state the
// form posted and the one the browser presented must be one, issued by a
// login (LTI13Logins.Start) and not used yet, and proven the way that login
// was started (LTI13BrowserProof) before this takes it: a wrong proof
// leaves the login to its own browser (takeProvenLogin); the id_token must
// come from that login's registration, be signed with its platform's key of
// the header's kid, and hold the claims ltidomain.CheckIDToken checks, the
// login's nonce among them; a resource-link launch must name an exam
// configuration. A replayed launch fails: its login was taken. An accepted
// resource-link launch is remembered under a new launch id
// (LTI13LaunchRecord), or refused, Unavailable, when it cannot be.
//
// Refusals that are authentication failures (401) are counted against the
// client's address and the token's issuer and client (lti13FailureKey when
// unreadable); past the limit the address is refused before anything else.
//
// An accepted launch is recorded in its registration's launch health; so is
// a refusal once the state names a login, on the login's registration
// (launchBlame).
func (l *LTI13Launches) Verify(ctx context.Context, caller domain.Caller, idToken, state string, browser LTI13BrowserProof) (ltidomain.LTI13Launch, error) {
	if !l.ws.IsRoot(caller) {
		return ltidomain.LTI13Launch{}, errLaunchCaller
	}
	key := lti13FailureKey
	if iss, client, err := unverifiedParty(idToken); err == nil {
		key = lti13FailureKey + "\x00" + iss + "\x00" + client
	}
	if err := l.limits.CheckFailures(ctx, key); err != nil {
		return ltidomain.LTI13Launch{}, err
	}
	launch, login, err := l.verify(ctx, idToken, state, browser)
	if fault.KindOf(err) == fault.Unauthenticated {
		l.limits.Failed(ctx, key)
	}
	if err != nil {
		l.health.refused(ctx, err, caller.RequestID, l.launchBlame(login, state, err))
		return ltidomain.LTI13Launch{}, err
	}
	l.health.accepted(ctx, launch.WorkspaceID, launch.RegistrationID)
	return launch, nil
}

// launchBlame finds the registration a refused launch is recorded on: its
// login's, once the state named one (login), or, when the state was not
// the browser's, the login the posted state names, if any. Anything posted
// without a state that names a login is nobody's.
func (l *LTI13Launches) launchBlame(login LTI13Login, state string, err error) func(context.Context) (blame, error) {
	return func(ctx context.Context) (blame, error) {
		if login.RegistrationID == "" && errors.Is(err, errLTI13State) {
			var ok bool
			var getErr error
			if login, ok, getErr = l.logins.Get(ctx, state); getErr != nil || !ok {
				return blame{}, getErr
			}
		}
		if login.RegistrationID == "" {
			return blame{}, nil
		}
		return blame{workspaceID: login.WorkspaceID, registrationIDs: []string{login.RegistrationID}}, nil
	}
}

// verify checks the launch; login is the login its state named once read,
// even when the launch is refused after.
func (l *LTI13Launches) verify(ctx context.Context, idToken, state string, browser LTI13BrowserProof) (ltidomain.LTI13Launch, LTI13Login, error) {
	switch {
	case idToken == "":
		return ltidomain.LTI13Launch{}, LTI13Login{}, errLTI13NoToken
	case state == "":
		return ltidomain.LTI13Launch{}, LTI13Login{}, errLTI13NoState
	case subtle.ConstantTimeCompare([]byte(state), []byte(browser.State)) != 1:
		return ltidomain.LTI13Launch{}, LTI13Login{}, errLTI13State
	}
	login, err := l.takeProvenLogin(ctx, state, browser)
	if err != nil {
		return ltidomain.LTI13Launch{}, login, err
	}
	launch, err := l.verifyToken(ctx, idToken, login)
	return launch, login, err
}

// verifyToken checks the id_token of a launch that finishes login, and
// keeps what an accepted launch leaves behind.
func (l *LTI13Launches) verifyToken(ctx context.Context, idToken string, login LTI13Login) (ltidomain.LTI13Launch, error) {
	header, err := jose.ParseHeader(idToken)
	if err != nil {
		return ltidomain.LTI13Launch{}, tokenError(err)
	}
	w, reg, err := l.registration(ctx, idToken, login)
	if err != nil {
		return ltidomain.LTI13Launch{}, err
	}
	claims, err := l.verifiedClaims(ctx, idToken, header.KID, reg)
	if err != nil {
		return ltidomain.LTI13Launch{}, err
	}
	launch, err := ltidomain.CheckIDToken(w.ID(), reg, claims, ltidomain.IDTokenExpectations{
		Nonce: login.Nonce, LaunchURL: l.s.URLs.LTI13Launch(), Now: l.s.Now(),
	})
	if err != nil {
		return ltidomain.LTI13Launch{}, err
	}
	if err := l.lti11Identity(w, reg, claims, &launch); err != nil {
		return ltidomain.LTI13Launch{}, err
	}
	if launch.MessageType == ltidomain.MessageResourceLink {
		examConfigID, err := ltidomain.CheckExamConfig(launch.Custom)
		if err != nil {
			return ltidomain.LTI13Launch{}, err
		}
		if launch.ID, err = l.remember(ctx, launch, examConfigID); err != nil {
			return ltidomain.LTI13Launch{}, err
		}
	}
	if launch.DeepLinking != nil {
		if err := l.keepDeepLink(ctx, &launch, reg); err != nil {
			return ltidomain.LTI13Launch{}, err
		}
	}
	return launch, nil
}

// takeProvenLogin takes the login of state once its browser has proven it
// (checkBrowserProof). The state travels in URLs to the platform: whoever
// learns it may post it with a proof of their own, and that refusal must
// leave the login to the browser it belongs to, so the login is read, the
// proof checked, and only then the login taken, by one of the launches
// racing for it. A refused proof answers the login read with the refusal.
func (l *LTI13Launches) takeProvenLogin(ctx context.Context, state string, browser LTI13BrowserProof) (LTI13Login, error) {
	login, ok, err := l.logins.Get(ctx, state)
	if err != nil {
		return LTI13Login{}, err
	}
	if !ok {
		return LTI13Login{}, errLTI13StateUnused
	}
	if err := checkBrowserProof(login, browser); err != nil {
		return login, err
	}
	taken, ok, err := l.logins.Take(ctx, state)
	if err != nil {
		return login, err
	}
	if !ok {
		return LTI13Login{}, errLTI13StateUnused
	}
	return taken, nil
}

// Refusals of a browser's proof that are not a wrong state: the login was
// started for one kind of proof and the launch brought the other.
var (
	errLTI13StorageNeeded = fault.New(fault.Unauthenticated,
		"this launch's login kept its state in the LMS's storage, and the launch did not read it back from there: open the link again from the LMS")
	errLTI13StorageUnused = fault.New(fault.Unauthenticated,
		"the launch read its state from the LMS's storage, but its login did not keep it there: open the link again from the LMS")
	errLTI13StorageNonce = fault.New(fault.Unauthenticated,
		"the nonce read back from the LMS's storage is not this launch's login's: open the link again from the LMS")
)

// checkBrowserProof holds the stored login to the way its browser was to
// prove it: a login with platform storage by the state and nonce read
// back from there, any other by its cookie.
func checkBrowserProof(login LTI13Login, browser LTI13BrowserProof) error {
	switch {
	case login.StorageTarget != "" && !browser.FromStorage:
		return errLTI13StorageNeeded
	case login.StorageTarget == "" && browser.FromStorage:
		return errLTI13StorageUnused
	case browser.FromStorage && subtle.ConstantTimeCompare([]byte(login.Nonce), []byte(browser.Nonce)) != 1:
		return errLTI13StorageNonce
	}
	return nil
}

// remember keeps the record of an accepted resource-link launch under a
// new launch id, which it answers.
func (l *LTI13Launches) remember(ctx context.Context, launch ltidomain.LTI13Launch, examConfigID string) (string, error) {
	r := LTI13LaunchRecord{
		ID: ident.NewSecret(), WorkspaceID: launch.WorkspaceID, RegistrationID: launch.RegistrationID, DeploymentID: launch.DeploymentID,
		ContextID: launch.ContextID, ResourceLinkID: launch.ResourceLinkID, Subject: launch.Subject, Email: launch.Email,
		Roles: launch.Roles, Services: launch.Services, ExamConfigID: examConfigID, LaunchedAt: l.s.timestamp(),
	}
	if err := l.records.Put(ctx, r); err != nil {
		l.s.Logger.Warn("an LTI 1.3 launch could not be recorded", "workspace", r.WorkspaceID, "registration", r.RegistrationID, "error", err.Error())
		return "", fault.Wrap(fault.Unavailable, err, errLTI13NotRecorded)
	}
	return r.ID, nil
}

// keepDeepLink keeps a deep-linking request for its reply under a new id
// (LTI13DeepLinkTTL), and sets launch.DeepLinking.ID.
func (l *LTI13Launches) keepDeepLink(ctx context.Context, launch *ltidomain.LTI13Launch, reg ltidomain.Registration) error {
	id := ident.NewSecret()
	link := LTI13DeepLink{
		WorkspaceID: launch.WorkspaceID, RegistrationID: reg.ID, ClientID: reg.ClientID, PlatformIssuer: reg.Issuer,
		DeploymentID: launch.DeploymentID, ReturnURL: launch.DeepLinking.ReturnURL, Data: launch.DeepLinking.Data,
		LineItem: launch.DeepLinking.LineItem, CreatedAt: l.s.timestamp(),
	}
	if err := l.deepLinks.Put(ctx, id, link, LTI13DeepLinkTTL); err != nil {
		return err
	}
	launch.DeepLinking.ID = id
	return nil
}

// registration finds the registration the unverified token names, by
// its issuer and client, and holds it to the login's and to an active
// workspace. The signature, checked next with that registration's keys, is
// what makes the token's word count.
func (l *LTI13Launches) registration(ctx context.Context, idToken string, login LTI13Login) (*domain.Workspace, ltidomain.Registration, error) {
	iss, client, err := unverifiedParty(idToken)
	if err != nil {
		return nil, ltidomain.Registration{}, err
	}
	w, err := l.ws.ByLTIPair(ctx, iss, client)
	if errors.Is(err, domain.ErrNotFound) {
		return nil, ltidomain.Registration{}, ltidomain.ErrLTI13Registration
	}
	if err != nil {
		return nil, ltidomain.Registration{}, fmt.Errorf("find the LTI registration of a launch: %w", err)
	}
	reg, ok := w.LTIRegistrations().For(iss, client)
	switch {
	case !ok:
		return nil, ltidomain.Registration{}, ltidomain.ErrLTI13Registration
	case reg.ID != login.RegistrationID || w.ID() != login.WorkspaceID:
		return nil, ltidomain.Registration{}, errLTI13OtherReg
	case w.Deleted():
		return nil, ltidomain.Registration{}, errLTI13Deleted
	}
	return w, reg, nil
}

// verifiedClaims verifies the token with the platform's key of kid and
// reads its claims.
func (l *LTI13Launches) verifiedClaims(ctx context.Context, idToken, kid string, reg ltidomain.Registration) (jose.Claims, error) {
	key, err := l.keys.Key(ctx, reg.ID, reg.JWKSURL, kid)
	switch {
	case errors.Is(err, ErrPlatformKeyNotFound):
		return jose.Claims{}, errLTI13KID
	case errors.Is(err, ErrPlatformKeysUnavailable):
		l.s.Logger.Warn("an LTI 1.3 platform's key set could not be fetched", "registration", reg.ID, "error", err.Error())
		return jose.Claims{}, fault.Wrap(fault.Unavailable, err, errLTI13KeysDown.Message)
	case err != nil:
		return jose.Claims{}, fmt.Errorf("the platform key of registration %s: %w", reg.ID, err)
	}
	payload, err := jose.Verify(idToken, key)
	if err != nil {
		return jose.Claims{}, tokenError(err)
	}
	claims, err := jose.ParseClaims(payload)
	if err != nil {
		return jose.Claims{}, tokenError(err)
	}
	return claims, nil
}

// unverifiedParty reads who the token says it is from, before its
// signature is checked, to find the registration whose keys check it: iss,
// and the client id, aud when it is one value, else azp (which must then be
// among aud, as ltidomain.CheckIDToken checks once the signature has).
func unverifiedParty(idToken string) (iss, client string, err error) {
	if _, err := jose.ParseHeader(idToken); err != nil {
		return "", "", tokenError(err)
	}
	// ParseHeader found three canonical base64url segments.
	parts := strings.SplitN(idToken, ".", 3)
	payload, err := base64.RawURLEncoding.DecodeString(parts[1])
	if err != nil {
		return "", "", errLTI13Malformed
	}
	c, err := jose.ParseClaims(payload)
	if err != nil {
		return "", "", errLTI13Malformed
	}
	switch {
	case c.Issuer == "":
		return "", "", ltidomain.ErrLTI13Registration
	case len(c.Audience) == 1:
		return c.Issuer, c.Audience[0], nil
	case c.AuthorizedParty != "":
		return c.Issuer, c.AuthorizedParty, nil
	}
	return "", "", ltidomain.ErrLTI13Audience
}

// tokenError is the refusal of a token pkg/jose refused.
func tokenError(err error) error {
	switch {
	case errors.Is(err, jose.ErrAlgorithm):
		return errLTI13Alg
	case errors.Is(err, jose.ErrCritical):
		return errLTI13Crit
	case errors.Is(err, jose.ErrNoKID):
		return errLTI13NoKID
	case errors.Is(err, jose.ErrSignature):
		return errLTI13Signature
	case errors.Is(err, jose.ErrTooLarge):
		return errLTI13TooLarge
	case errors.Is(err, jose.ErrKey):
		// The platform published a key this package will not use.
		return errLTI13KID
	}
	return errLTI13Malformed
}

// lti11Identity gives a launch that carries a signed lti1p1 claim the
// identity the user's LTI 1.1 launches had, once the claim's signature
// holds with the shared secret of the workspace's LTI 1.1 key pair it
// names (a consumer key of another workspace proves nothing: 401).
func (l *LTI13Launches) lti11Identity(w *domain.Workspace, reg ltidomain.Registration, c jose.Claims, launch *ltidomain.LTI13Launch) error {
	claim, ok, err := ltidomain.ReadLTI1p1Claim(c)
	if err != nil || !ok {
		return err
	}
	key, err := w.LTIKey(claim.ConsumerKey, l.s.Now())
	if err != nil {
		return ltidomain.ErrLTI1p1Sign
	}
	secret, err := l.ws.OpenSecret(key)
	if err != nil {
		return fmt.Errorf("open the LTI 1.1 shared secret: %w", err)
	}
	return ltidomain.CheckLTI1p1Claim(launch, reg, c, claim, secret)
}
