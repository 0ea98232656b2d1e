// Package platformkeys keeps the public keys of the LMS platforms that
// launch the tool over LTI 1.3: each registration's JSON Web Key Set,
// fetched from the platform's JWKS URL and kept by this replica.
//
// The policy (docs/contract-notes.md, "LTI 1.3"):
//   - a key set is kept as long as the platform's Cache-Control max-age
//     says, within MinFresh and MaxFresh; DefaultFresh without one;
//   - a kid the set does not hold (the platform rotated its keys) refetches
//     the set, at most once per refetch interval (RefetchInterval unless
//     New is given a shorter one, for tests) per registration, so a stream
//     of made-up kids costs the platform one fetch per interval;
//   - while a fetch fails, the keys already held keep serving, and the next
//     try waits the refetch interval;
//   - one fetch at a time per registration: concurrent launches wait for it
//     rather than each fetching.
//
// Fetches go through pkg/outbound: https, public addresses, a timeout, and
// at most jose.MaxKeySetSize bytes.
package platformkeys

import (
	"context"
	"crypto/rsa"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/liveproctor/workspaces/pkg/jose"
	"github.com/liveproctor/workspaces/pkg/outbound"
	ltiapp "github.com/liveproctor/workspaces/services/workspace/internal/lti/app"
)

// The cache policy's bounds.
const (
	MinFresh        = 5 * time.Minute
	MaxFresh        = 24 * time.Hour
	DefaultFresh    = time.Hour
	RefetchInterval = 30 * time.Second
)

// maxEntries bounds the registrations whose keys a replica keeps.
const maxEntries = 10_000

// The errors of Key are the application's (ltiapp.PlatformKeys).
var (
	// ErrKeyNotFound: the platform's key set has no key of that kid, even
	// after the refetch the interval allowed.
	ErrKeyNotFound = ltiapp.ErrPlatformKeyNotFound
	// ErrUnavailable: no key set is held and the platform's JWKS URL
	// could not be read.
	ErrUnavailable = ltiapp.ErrPlatformKeysUnavailable
)

var _ ltiapp.PlatformKeys = (*Cache)(nil)

// Fetcher reads a URL under the outbound policy; *outbound.Client is one.
type Fetcher interface {
	Get(ctx context.Context, rawURL, accept string, maxBytes int64) (outbound.Response, error)
}

// Cache is the replica's platform keys.
type Cache struct {
	fetch   Fetcher
	now     func() time.Time
	refetch time.Duration // between two fetches of a registration's set

	mu      sync.Mutex
	entries map[string]*entry // by registration id
}

// entry is one registration's key set. mu is held while the set is read or
// fetched.
type entry struct {
	mu         sync.Mutex
	url        string
	keys       jose.KeySet
	held       bool      // a set was fetched once
	freshUntil time.Time // refetch when reached
	lastTry    time.Time // the last fetch, successful or not
}

// New returns an empty cache fetching with f; now is the clock (time.Now
// when nil); refetch is the refetch interval, RefetchInterval when zero
// (the black-box tests shorten it, LTI_JWKS_REFETCH_INTERVAL).
func New(f Fetcher, now func() time.Time, refetch time.Duration) *Cache {
	if now == nil {
		now = time.Now
	}
	if refetch <= 0 {
		refetch = RefetchInterval
	}
	return &Cache{fetch: f, now: now, refetch: refetch, entries: map[string]*entry{}}
}

// Key returns the public key kid of the platform of registration
// registrationID, whose key set is at jwksURL.
func (c *Cache) Key(ctx context.Context, registrationID, jwksURL, kid string) (*rsa.PublicKey, error) {
	e := c.entry(registrationID, jwksURL)
	e.mu.Lock()
	defer e.mu.Unlock()
	now := c.now()
	tried := false
	var fetchErr error
	if (!e.held || !now.Before(e.freshUntil)) && e.mayTry(now, c.refetch) {
		tried, fetchErr = true, c.refresh(ctx, e, now)
	}
	if !e.held {
		return nil, fmt.Errorf("%w: %w", ErrUnavailable, orAgain(fetchErr, c.refetch))
	}
	if k, ok := e.keys.Key(kid); ok {
		return k, nil
	}
	if !tried && e.mayTry(now, c.refetch) && c.refresh(ctx, e, now) == nil {
		// A kid it did not know: the platform may have rotated its keys.
		if k, ok := e.keys.Key(kid); ok {
			return k, nil
		}
	}
	return nil, ErrKeyNotFound
}

// mayTry reports whether a fetch may be tried now: none was yet, or the
// last one was at least interval ago.
func (e *entry) mayTry(now time.Time, interval time.Duration) bool {
	return e.lastTry.IsZero() || !now.Before(e.lastTry.Add(interval))
}

// orAgain names why a set is missing when no fetch was tried this time.
func orAgain(err error, interval time.Duration) error {
	if err != nil {
		return err
	}
	return fmt.Errorf("the last fetch failed less than %s ago", interval)
}

// entry returns the registration's entry, a new one when its JWKS URL
// changed.
func (c *Cache) entry(registrationID, jwksURL string) *entry {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.entries[registrationID]
	if !ok || e.url != jwksURL {
		if !ok && len(c.entries) >= maxEntries {
			for id := range c.entries { // forget one, any
				delete(c.entries, id)
				break
			}
		}
		e = &entry{url: jwksURL}
		c.entries[registrationID] = e
	}
	return e
}

// refresh fetches the set; on failure the held set, if any, stays.
func (c *Cache) refresh(ctx context.Context, e *entry, now time.Time) error {
	e.lastTry = now
	resp, err := c.fetch.Get(ctx, e.url, "application/json, application/jwk-set+json", jose.MaxKeySetSize)
	if err != nil {
		return err
	}
	if resp.Status != http.StatusOK {
		return fmt.Errorf("the JWKS URL answered %d", resp.Status)
	}
	keys, err := jose.ParseKeySet(resp.Body)
	if err != nil {
		return err
	}
	e.keys, e.held = keys, true
	e.freshUntil = now.Add(Freshness(resp.Header.Get("Cache-Control")))
	return nil
}

// Freshness is how long a key set answered with the Cache-Control value cc
// is kept: its max-age within MinFresh and MaxFresh, MinFresh for no-store
// or no-cache, DefaultFresh when it says neither.
func Freshness(cc string) time.Duration {
	fresh := DefaultFresh
	for directive := range strings.SplitSeq(cc, ",") {
		name, value, _ := strings.Cut(strings.TrimSpace(directive), "=")
		switch strings.ToLower(name) {
		case "no-store", "no-cache":
			return MinFresh
		case "max-age":
			if s, err := strconv.ParseInt(strings.Trim(value, `"`), 10, 64); err == nil && s >= 0 {
				fresh = time.Duration(min(s, int64(MaxFresh/time.Second))) * time.Second
			}
		}
	}
	return min(max(fresh, MinFresh), MaxFresh)
}
