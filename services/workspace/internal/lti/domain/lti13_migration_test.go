package domain_test

import (
	"errors"
	"strconv"
	"testing"
	"time"

	ltidomain "github.com/liveproctor/workspaces/services/workspace/internal/lti/domain"
)

// The example of 1EdTech's LTI 1.1 to 1.3 migration guide (the lti1p1
// claim): its base string and secret give its signature.
func TestLTI1p1SignMatchesTheMigrationGuide(t *testing.T) {
	got := ltidomain.LTI1p1Sign("my-lti11-secret", "179248902", "689302", "https://lmsvendor.com", "PM48OJSfGDTAzAo", "1551290856", "172we8671fd8z")
	if want := "lWd54kFo5qU7xshAna6v8BwoBm6tmUjc6GTax6+12ps="; got != want {
		t.Fatalf("LTI1p1Sign = %s, want %s", got, want)
	}
}

// A launch whose lti1p1 claim is signed with the workspace's 1.1 secret
// gets the identity its 1.1 launches had; another secret is refused; a
// claim without a signature changes nothing.
func TestCheckLTI1p1Claim(t *testing.T) {
	now := time.Date(2026, 11, 26, 8, 0, 0, 0, time.UTC)
	want := ltidomain.IDTokenExpectations{Nonce: "n-1", LaunchURL: launchURL, Now: now}
	exp := now.Add(5 * time.Minute).Unix()
	base := map[string]any{"email": nil, "exp": exp}
	for _, c := range []struct {
		name   string
		sign   string
		secret string
		email  string
		err    error
	}{
		{name: "signed with the 1.1 secret", sign: ltidomain.LTI1p1Sign("s3cret", "ck-1", "1:abc", registration.Issuer, registration.ClientID, strconv.FormatInt(exp, 10), "n-1"),
			secret: "s3cret", email: ltidomain.DerivedEmail("ck-1", "u-11")},
		{name: "signed with another secret", sign: ltidomain.LTI1p1Sign("other", "ck-1", "1:abc", registration.Issuer, registration.ClientID, strconv.FormatInt(exp, 10), "n-1"),
			secret: "s3cret", err: ltidomain.ErrLTI1p1Sign},
		{name: "signed over another nonce", sign: ltidomain.LTI1p1Sign("s3cret", "ck-1", "1:abc", registration.Issuer, registration.ClientID, strconv.FormatInt(exp, 10), "n-2"),
			secret: "s3cret", err: ltidomain.ErrLTI1p1Sign},
	} {
		t.Run(c.name, func(t *testing.T) {
			changes := map[string]any{"https://purl.imsglobal.org/spec/lti/claim/lti1p1": map[string]any{
				"user_id": "u-11", "oauth_consumer_key": "ck-1", "oauth_consumer_key_sign": c.sign}}
			for k, v := range base {
				changes[k] = v
			}
			claims := idToken(t, now, changes)
			l, err := ltidomain.CheckIDToken("w", registration, claims, want)
			if err != nil {
				t.Fatal(err)
			}
			claim, ok, err := ltidomain.ReadLTI1p1Claim(claims)
			if err != nil || !ok {
				t.Fatalf("ReadLTI1p1Claim = %+v, %v, %v", claim, ok, err)
			}
			err = ltidomain.CheckLTI1p1Claim(&l, registration, claims, claim, c.secret)
			switch {
			case c.err != nil && !errors.Is(err, c.err):
				t.Fatalf("err = %v, want %v", err, c.err)
			case c.err == nil && (err != nil || l.Email != c.email):
				t.Fatalf("email = %q, %v; want %q", l.Email, err, c.email)
			}
		})
	}
	unsigned := idToken(t, now, map[string]any{"https://purl.imsglobal.org/spec/lti/claim/lti1p1": map[string]any{"user_id": "u-11"}})
	if _, ok, err := ltidomain.ReadLTI1p1Claim(unsigned); ok || err != nil {
		t.Fatalf("an unsigned claim was read: %v, %v", ok, err)
	}
}
