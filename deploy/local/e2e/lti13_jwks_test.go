package e2e

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/liveproctor/workspaces/pkg/testenv"
)

// jwksRefetch is the stack's LTI_JWKS_REFETCH_INTERVAL: the contract's
// 30 s, shortened so that a rotation is seen within the test.
const jwksRefetch = time.Second

// keyLaunches are launches of one registration of the platform, and what
// the platform counted of the tool's fetches of its keys.
type keyLaunches struct {
	p      *platform
	client string
}

// launch runs a launch whose token names kid (empty: the platform's
// current key).
func (k keyLaunches) launch(t *testing.T, kid string) (int, string) {
	t.Helper()
	o := withExamClaim
	if kid != "" {
		o.Header = map[string]any{"kid": kid}
	}
	return launchOnce(t, k.p, k.client, "dep-1", o)
}

func (k keyLaunches) passes(t *testing.T) {
	t.Helper()
	if status, page := k.launch(t, ""); status != http.StatusOK {
		t.Fatalf("a launch: %d, want 200\n%s", status, page)
	}
}

func wantKeyNotFound(t *testing.T, status int, page string) {
	t.Helper()
	if status != http.StatusUnauthorized || !strings.Contains(page, "key not found") {
		t.Fatalf("a launch: %d, want 401 saying \"key not found\"\n%s", status, page)
	}
}

func (k keyLaunches) fetches(t *testing.T) int { return k.p.withT(t).Stats().JWKSFetches }

// The tool's copy of a platform's keys, seen from the platform's side: one
// fetch for many launches; launches on held keys while the JWKS URL fails;
// a rotated kid refetched once, after which its launch passes; made-up kids
// refetching at most once per interval.
func TestLTI13PlatformKeysCache(t *testing.T) {
	p := startPlatform(t, platformOptions{})
	s := startLTI13Stack(t, p.URL, "LTI_JWKS_REFETCH_INTERVAL="+jwksRefetch.String())
	k := keyLaunches{p: p, client: clientID(t, "a")}
	p.SetClients(s.GatewayURL, []platformClient{{ClientID: k.client, DeploymentIDs: []string{"dep-1"}}})
	w := asRoot(t).on(s).create(unique(t, "school"), nil)
	w.server(t).on(s).register(w.WorkspaceID, map[string]any{
		"issuer": p.Issuer, "clientId": k.client, "deploymentIds": []string{"dep-1"},
		"authLoginUrl": p.URL + "/auth", "jwksUrl": p.URL + "/jwks",
	})
	// In this order: each starts where the one before left the cache.
	t.Run("100 launches fetch the keys once", k.oneFetchForMany)
	t.Run("held keys serve while the JWKS URL answers 500", k.heldKeysServe)
	t.Run("a rotated kid refetches once and its launch passes", k.rotatedKid)
	t.Run("made-up kids refetch at most once per interval", k.madeUpKids)
}

func (k keyLaunches) oneFetchForMany(t *testing.T) {
	k.p.withT(t).Reset()
	for range 100 {
		k.passes(t)
	}
	if n := k.fetches(t); n != 1 {
		t.Errorf("%d JWKS fetches for 100 launches, want 1", n)
	}
}

func (k keyLaunches) heldKeysServe(t *testing.T) {
	p := k.p.withT(t)
	p.Reset()
	p.SetJWKS(http.StatusInternalServerError, "")
	defer p.SetJWKS(http.StatusOK, "")
	for range 5 {
		k.passes(t)
	}
	// A kid it does not hold tries the failing URL (once per interval), is
	// refused, and leaves the held keys serving.
	status, page := k.launch(t, randomKid(t))
	wantKeyNotFound(t, status, page)
	k.passes(t)
	if n := k.fetches(t); n > 1 {
		t.Errorf("%d JWKS fetches, want at most the unknown kid's one", n)
	}
}

// Within the interval since the last fetch the new kid is refused without
// a fetch; the first launch after it refetches once and passes.
func (k keyLaunches) rotatedKid(t *testing.T) {
	k.p.withT(t).Reset()
	k.p.withT(t).Rotate(false)
	refused := 0
	testenv.Eventually(t, 20*jwksRefetch, func() error {
		status, page := k.launch(t, "")
		if status == http.StatusOK {
			return nil
		}
		wantKeyNotFound(t, status, page)
		if n := k.fetches(t); n != 0 {
			t.Fatalf("%d JWKS fetches while the rotated kid was refused", n)
		}
		refused++
		return fmt.Errorf("refused %d times", refused)
	}, "a launch signed with the rotated key")
	if n := k.fetches(t); n != 1 {
		t.Errorf("%d JWKS fetches for the rotated kid (%d refusals before), want 1", n, refused)
	}
}

func (k keyLaunches) madeUpKids(t *testing.T) {
	k.p.withT(t).Reset()
	start := time.Now()
	for range 50 {
		status, page := k.launch(t, randomKid(t))
		wantKeyNotFound(t, status, page)
	}
	elapsed := time.Since(start)
	if n, most := k.fetches(t), 1+int(elapsed/jwksRefetch); n > most {
		t.Errorf("%d JWKS fetches for 50 unknown kids in %s, want at most %d (one per %s)", n, elapsed, most, jwksRefetch)
	}
}

func randomKid(t *testing.T) string {
	t.Helper()
	b := make([]byte, 8)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	return "unknown-" + hex.EncodeToString(b)
}
