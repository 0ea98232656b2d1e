package app

import (
	"slices"
	"testing"
	"time"

	ltidomain "github.com/liveproctor/workspaces/services/workspace/internal/lti/domain"
)

func TestGrantedTokenMargin(t *testing.T) {
	sent := time.Unix(1_800_000_000, 0)
	for _, tc := range []struct {
		expiresIn        time.Duration
		useFor, renewAft time.Duration
	}{
		{time.Hour, 54 * time.Minute, 43*time.Minute + 12*time.Second},                                  // a tenth kept back
		{5 * time.Minute, 4 * time.Minute, 3*time.Minute + 12*time.Second},                              // a minute at least
		{time.Minute, 30 * time.Second, 24 * time.Second},                                               // half at most
		{0, 9 * time.Minute, 7*time.Minute + 12*time.Second},                                            // none given: 10 minutes
		{72 * time.Hour, 21*time.Hour + 36*time.Minute, 17*time.Hour + 16*time.Minute + 48*time.Second}, // a day at most
	} {
		got := grantedToken(GrantedToken{AccessToken: "t", ExpiresIn: tc.expiresIn}, []string{"a"}, sent)
		if use, renew := got.UseUntil.Sub(sent), got.RenewAt.Sub(sent); use != tc.useFor || renew != tc.renewAft {
			t.Errorf("expires_in %v: used for %v, renewed after %v; want %v, %v", tc.expiresIn, use, renew, tc.useFor, tc.renewAft)
		}
	}
	asked := []string{"a", "b"}
	if got := grantedToken(GrantedToken{AccessToken: "t"}, asked, sent); !slices.Equal(got.Scopes, asked) {
		t.Errorf("no scope answered: granted %v, want those asked", got.Scopes)
	}
	if got := grantedToken(GrantedToken{AccessToken: "t", Scope: "b  a b"}, []string{"a", "b", "c"}, sent); !slices.Equal(got.Scopes, asked) {
		t.Errorf("scope answered: granted %v, want %v", got.Scopes, asked)
	}
}

func TestTokenKey(t *testing.T) {
	r := ltidomain.Registration{ID: "reg-1", ClientID: "c", AuthTokenURL: "https://lms.example/token"}
	key := tokenKey(r, scopeSet([]string{"b", "a", "b"}))
	if tokenKey(r, scopeSet([]string{"a", "b"})) != key {
		t.Error("one scope set in another order, or with a repeat, is another key")
	}
	moved, other := r, r
	moved.AuthTokenURL += "2"
	other.ClientID = "c2"
	for _, k := range []string{tokenKey(moved, []string{"a", "b"}), tokenKey(other, []string{"a", "b"}),
		tokenKey(r, []string{"a"}), tokenKey(r, []string{"a b"})} {
		if k == key {
			t.Error("a changed registration or scope set has the same key")
		}
	}
}
