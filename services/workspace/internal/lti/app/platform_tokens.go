package app

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/liveproctor/workspaces/pkg/clip"
	"github.com/liveproctor/workspaces/pkg/fault"
	"github.com/liveproctor/workspaces/pkg/ident"
	"github.com/liveproctor/workspaces/pkg/ttlcache"
	ltidomain "github.com/liveproctor/workspaces/services/workspace/internal/lti/domain"
)

// The access tokens' schedule.
const (
	// assertionLife is how long a client assertion is good for: the
	// 1EdTech Security Framework asks for a short one (5 minutes at most).
	assertionLife = 5 * time.Minute
	// tokenMarginMin is the least of a token's life left unused at its
	// end: a token used until its last seconds arrives expired (ltijs #179).
	tokenMarginMin = time.Minute
	// defaultTokenLife is a token's life when the platform gives no
	// expires_in; a 401 ends it earlier (Invalidate).
	defaultTokenLife = 10 * time.Minute
	// maxTokenLife bounds what a platform's expires_in is believed.
	maxTokenLife = 24 * time.Hour
	// tokenLockLife bounds how long one fetch holds the lock that keeps the
	// other replicas waiting: longer than a fetch takes (the token
	// client's timeout), so a replica that died holding it blocks the
	// others that long at most.
	tokenLockLife = 15 * time.Second
	// tokenPoll is how often a replica waiting for another's fetch looks
	// for its token.
	tokenPoll = 50 * time.Millisecond
)

// PlatformToken is an access token a platform granted the tool for a
// scope set. It is a secret: it goes in the Authorization header of the
// platform's service calls, never in a log or an error.
type PlatformToken struct {
	AccessToken string
	// Scopes are the scopes granted, sorted; fewer than asked when the
	// platform said so.
	Scopes []string
	// UseUntil: the token is never used at or after it (its expiry less
	// the margin); RenewAt: from then a call still uses it and starts one
	// renewal.
	UseUntil, RenewAt time.Time
}

// GrantedToken is what a platform's token endpoint answered.
type GrantedToken struct {
	AccessToken string
	ExpiresIn   time.Duration // zero: not given
	Scope       string        // space-separated; empty: as asked (RFC 6749 §5.1)
}

// TokenEndpoint asks a platform's OAuth 2 token endpoint for an access
// token with a client assertion (adapters/platformtoken). Its errors are
// faults: the platform's OAuth error (BadGateway), or a 429 or 5xx as
// Unavailable with the platform's Retry-After.
type TokenEndpoint interface {
	Grant(ctx context.Context, tokenURL, assertion, scope string) (GrantedToken, error)
}

// PlatformTokenStore keeps the access tokens every replica shares, each
// under a key until its UseUntil, and the short lock under which one
// replica fetches a key's token while the others wait (adapters/ltistate:
// Redis, or this replica's memory without it).
type PlatformTokenStore interface {
	// Get returns the token under key, if one is held.
	Get(ctx context.Context, key string) (PlatformToken, bool, error)
	// Lock takes key's lock for owner for ttl; false when another holds it.
	Lock(ctx context.Context, key, owner string, ttl time.Duration) (bool, error)
	// Put stores t under key until t.UseUntil and releases owner's lock.
	Put(ctx context.Context, key, owner string, t PlatformToken) error
	// Unlock releases key's lock if owner holds it.
	Unlock(ctx context.Context, key, owner string) error
	// Drop removes the token under key if it is still accessToken.
	Drop(ctx context.Context, key, accessToken string) error
}

// Signer signs the tool's tokens with its current key, naming its kid
// (ToolKeys).
type Signer interface {
	Sign(ctx context.Context, claims any) (string, error)
}

var _ Signer = (*ToolKeys)(nil)

// PlatformTokens are the tool's access tokens to the platforms' services
// (Assignment and Grade Services, Names and Role Provisioning), obtained
// by OAuth 2 client credentials with a client assertion (RFC 7523, the
// 1EdTech Security Framework §4.1) and shared by every replica through
// the store: one token per (registration, scope set), used until its
// expiry less a margin, renewed ahead of it by one fetch at a time: one
// replica's under the store's lock, one flight within it (ttlcache.Loader).
type PlatformTokens struct {
	endpoint TokenEndpoint
	store    PlatformTokenStore
	signer   Signer
	settings Settings
	flights  *ttlcache.Loader[string, PlatformToken]
	renewing sync.Map // the keys this replica renews in the background
	lockLife time.Duration
}

// NewPlatformTokens returns the access tokens fetched from endpoint with
// assertions signer signs, shared through store. lockLife is how long a
// fetch holds the store's lock, tokenLockLife when zero (tests shorten it).
func NewPlatformTokens(endpoint TokenEndpoint, store PlatformTokenStore, signer Signer, lockLife time.Duration, s Settings) *PlatformTokens {
	notNil(endpoint, store, signer)
	if lockLife <= 0 {
		lockLife = tokenLockLife
	}
	// The loader only joins the callers of one key to one load: nothing is
	// kept in it (the store holds the tokens). A load waits for another
	// replica's fetch at most a lock's life, then fetches itself.
	flights := ttlcache.NewLoader(ttlcache.New[string, PlatformToken](1, 0, nil),
		ttlcache.LoaderOptions{LoadTimeout: 3 * lockLife})
	return &PlatformTokens{endpoint: endpoint, store: store, signer: signer, settings: s.withDefaults(), flights: flights, lockLife: lockLife}
}

// errNoTokenURL: the registration gives no token endpoint.
func errNoTokenURL(registrationID string) error {
	return fault.New(fault.FailedPrecondition,
		"LTI registration %q has no authTokenUrl: the platform's services cannot be called", clip.Runes(registrationID, 64))
}

// Token returns an access token to r's platform for scopes (in any order,
// repeats ignored), the one every replica shares while it is good.
func (p *PlatformTokens) Token(ctx context.Context, r ltidomain.Registration, scopes []string) (PlatformToken, error) {
	if r.AuthTokenURL == "" {
		return PlatformToken{}, errNoTokenURL(r.ID)
	}
	set := scopeSet(scopes)
	if len(set) == 0 {
		return PlatformToken{}, fault.New(fault.Invalid, "an access token needs at least one scope")
	}
	key := tokenKey(r, set)
	t, ok, err := p.store.Get(ctx, key)
	if err != nil {
		return PlatformToken{}, err
	}
	now := p.settings.Now()
	load := func(ctx context.Context) (PlatformToken, bool, error) {
		t, err := p.obtain(ctx, r, set, key)
		return t, false, err
	}
	if ok && now.Before(t.UseUntil) {
		if !now.Before(t.RenewAt) {
			p.renew(ctx, r.ID, key, load)
		}
		return t, nil
	}
	return p.flights.Get(ctx, key, load)
}

// renew starts the renewal of key in the background, unless this replica
// is renewing it: one goroutine, however many calls see the token due.
func (p *PlatformTokens) renew(ctx context.Context, registrationID, key string, load ttlcache.LoadFunc[PlatformToken]) {
	if _, renewing := p.renewing.LoadOrStore(key, true); renewing {
		return
	}
	go func() {
		defer p.renewing.Delete(key)
		if _, err := p.flights.Get(context.WithoutCancel(ctx), key, load); err != nil {
			p.settings.Logger.Warn("LTI access token not renewed", "registration", registrationID, "error", err)
		}
	}()
}

// Invalidate drops t, which a platform's service refused (401), if it is
// still the token shared for r and scopes: of the calls it failed, the
// first drops it, and the next Token fetches one new token for them all.
func (p *PlatformTokens) Invalidate(ctx context.Context, r ltidomain.Registration, scopes []string, t PlatformToken) error {
	return p.store.Drop(ctx, tokenKey(r, scopeSet(scopes)), t.AccessToken)
}

// obtain returns the shared token once it is good and not due for renewal,
// fetching it under the store's lock; while another replica holds the
// lock, it serves the token still good, or waits for the new one (up to
// the lock's life: a holder that died lets go when its lock expires).
func (p *PlatformTokens) obtain(ctx context.Context, r ltidomain.Registration, set []string, key string) (PlatformToken, error) {
	owner := ident.NewSecret()
	tick := time.NewTicker(tokenPoll)
	defer tick.Stop()
	for {
		t, held, err := p.store.Get(ctx, key)
		if err != nil {
			return PlatformToken{}, err
		}
		now := p.settings.Now()
		good := held && now.Before(t.UseUntil)
		if good && now.Before(t.RenewAt) {
			return t, nil
		}
		locked, err := p.store.Lock(ctx, key, owner, p.lockLife)
		if err != nil {
			return PlatformToken{}, err
		}
		if locked {
			// Another replica may have stored a token between the read
			// and the lock.
			if t, held, err := p.store.Get(ctx, key); err == nil && held && p.settings.Now().Before(t.RenewAt) {
				_ = p.store.Unlock(ctx, key, owner)
				return t, nil
			}
			return p.fetch(ctx, r, set, key, owner, good)
		}
		if good {
			return t, nil // due, and another replica renews it
		}
		select {
		case <-ctx.Done():
			return PlatformToken{}, fault.Wrap(fault.Unavailable, ctx.Err(),
				"the platform's access token is being fetched by another replica; retry shortly")
		case <-tick.C:
		}
	}
}

// fetch asks the platform for a token with a new client assertion and
// stores it, releasing the lock owner holds. A renewal (a token is still
// good) that fails keeps the lock until it expires, so that a platform
// refusing renewals is asked once per lock's life, not at every call.
func (p *PlatformTokens) fetch(ctx context.Context, r ltidomain.Registration, set []string, key, owner string, renewal bool) (PlatformToken, error) {
	sent := p.settings.Now() // the token's life counts from before it was asked for
	assertion, err := p.signer.Sign(ctx, clientAssertion{
		Issuer: r.ClientID, Subject: r.ClientID, Audience: r.AuthTokenURL,
		IssuedAt: sent.Unix(), Expires: sent.Add(assertionLife).Unix(), ID: ident.NewSecret(),
	})
	if err == nil {
		var g GrantedToken
		g, err = p.endpoint.Grant(ctx, r.AuthTokenURL, assertion, strings.Join(set, " "))
		if err == nil {
			t := grantedToken(g, set, sent)
			if err := p.store.Put(ctx, key, owner, t); err != nil {
				return PlatformToken{}, err
			}
			return t, nil
		}
	}
	if !renewal {
		// The callers waiting have no token: let them try at once.
		_ = p.store.Unlock(context.WithoutCancel(ctx), key, owner)
	}
	return PlatformToken{}, err
}

// clientAssertion is the JWT the tool authenticates with at the token
// endpoint (RFC 7523 §3): issued by and about the client, for the
// endpoint, short-lived, with a unique id.
type clientAssertion struct {
	Issuer   string `json:"iss"`
	Subject  string `json:"sub"`
	Audience string `json:"aud"`
	IssuedAt int64  `json:"iat"`
	Expires  int64  `json:"exp"`
	ID       string `json:"jti"`
}

// grantedToken is g as kept: used until its life (counted from sent) less
// a margin of a tenth of it, at least tokenMarginMin but never more than
// half of it, and renewed in the last fifth of that.
func grantedToken(g GrantedToken, asked []string, sent time.Time) PlatformToken {
	life := g.ExpiresIn
	if life <= 0 {
		life = defaultTokenLife
	}
	life = min(life, maxTokenLife)
	usable := life - min(max(life/10, tokenMarginMin), life/2)
	granted := asked
	if g.Scope != "" {
		granted = scopeSet(strings.Fields(g.Scope))
	}
	return PlatformToken{
		AccessToken: g.AccessToken, Scopes: granted,
		UseUntil: sent.Add(usable), RenewAt: sent.Add(usable - usable/5),
	}
}

// scopeSet is scopes sorted, without repeats or empty ones: the set a
// token is asked for and kept under.
func scopeSet(scopes []string) []string {
	set := slices.DeleteFunc(slices.Clone(scopes), func(s string) bool { return s == "" })
	slices.Sort(set)
	return slices.Compact(set)
}

// tokenKey names the token of r's platform for set: a digest of the
// registration, its client id and token URL (a changed registration asks
// anew), and the set.
func tokenKey(r ltidomain.Registration, set []string) string {
	h := sha256.New()
	for _, part := range append([]string{r.ID, r.ClientID, r.AuthTokenURL}, set...) {
		_, _ = fmt.Fprintf(h, "%d:%s", len(part), part)
	}
	return hex.EncodeToString(h.Sum(nil))
}
