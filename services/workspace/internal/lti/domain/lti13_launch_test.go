package domain_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"testing"
	"time"

	"github.com/liveproctor/workspaces/pkg/fault"
	"github.com/liveproctor/workspaces/pkg/jose"
	ltidomain "github.com/liveproctor/workspaces/services/workspace/internal/lti/domain"
)

const launchURL = "https://tool.example.com/lti/v1p3/launch"

var registration = ltidomain.Registration{
	ID: "reg-1", Issuer: "https://canvas.instructure.com", ClientID: "10000000000001",
	DeploymentIDs: []string{"1:abc", "2:def"},
}

// idToken is a resource-link launch's claims as a platform sends them,
// with changes applied: a nil value removes the claim.
func idToken(t *testing.T, now time.Time, changes map[string]any) jose.Claims {
	t.Helper()
	claims := map[string]any{
		"iss": registration.Issuer, "aud": registration.ClientID, "sub": "user-7",
		"exp": now.Add(5 * time.Minute).Unix(), "iat": now.Unix(), "nonce": "n-1",
		"email": "ada@example.edu",
		"https://purl.imsglobal.org/spec/lti/claim/version":         "1.3.0",
		"https://purl.imsglobal.org/spec/lti/claim/message_type":    "LtiResourceLinkRequest",
		"https://purl.imsglobal.org/spec/lti/claim/deployment_id":   "1:abc",
		"https://purl.imsglobal.org/spec/lti/claim/target_link_uri": launchURL,
		"https://purl.imsglobal.org/spec/lti/claim/resource_link":   map[string]any{"id": "link-1"},
		"https://purl.imsglobal.org/spec/lti/claim/roles":           []string{"http://purl.imsglobal.org/vocab/lis/v2/membership#Learner"},
		"https://purl.imsglobal.org/spec/lti/claim/custom":          map[string]any{"exam_config_id": "0f8fad5b-d9cb-469f-a165-70867728950e"},
	}
	maps.Copy(claims, changes)
	for k, v := range changes {
		if v == nil {
			delete(claims, k)
		}
	}
	payload, err := json.Marshal(claims)
	if err != nil {
		t.Fatal(err)
	}
	c, err := jose.ParseClaims(payload)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// The cases of 1EdTech's LTI 1.3 tool certification that concern the
// id_token's claims, each refused with its own reason (the signature's
// cases are pkg/jose's).
func TestCheckIDToken(t *testing.T) {
	now := time.Date(2026, 11, 26, 8, 0, 0, 0, time.UTC)
	want := ltidomain.IDTokenExpectations{Nonce: "n-1", LaunchURL: launchURL, Now: now}
	for _, c := range []struct {
		name    string
		changes map[string]any
		err     error      // a sentinel, or
		kind    fault.Kind // the kind of another refusal
	}{
		{name: "accepted", changes: nil},
		{name: "iat 5 s ahead", changes: map[string]any{"iat": now.Add(5 * time.Second).Unix()}},
		{name: "aud an array with azp", changes: map[string]any{"aud": []string{"other", registration.ClientID}, "azp": registration.ClientID}},
		{name: "wrong iss", changes: map[string]any{"iss": "https://other.example.com"}, err: ltidomain.ErrLTI13Registration},
		{name: "foreign aud", changes: map[string]any{"aud": "someone-else"}, err: ltidomain.ErrLTI13Audience},
		{name: "several aud, no azp", changes: map[string]any{"aud": []string{"other", registration.ClientID}}, err: ltidomain.ErrLTI13Audience},
		{name: "several aud, foreign azp", changes: map[string]any{"aud": []string{"other", registration.ClientID}, "azp": "other"}, err: ltidomain.ErrLTI13Audience},
		{name: "iat 120 s ahead", changes: map[string]any{"iat": now.Add(120 * time.Second).Unix()}, err: ltidomain.ErrLTI13Expired},
		{name: "expired", changes: map[string]any{"exp": now.Add(-2 * time.Minute).Unix()}, err: ltidomain.ErrLTI13Expired},
		{name: "another nonce", changes: map[string]any{"nonce": "n-2"}, err: ltidomain.ErrLTI13Nonce},
		{name: "no nonce", changes: map[string]any{"nonce": nil}, err: ltidomain.ErrLTI13Nonce},
		{name: "unknown deployment", changes: map[string]any{"https://purl.imsglobal.org/spec/lti/claim/deployment_id": "9:zzz"}, err: ltidomain.ErrLTI13Deployment},
		{name: "version 1.2", changes: map[string]any{"https://purl.imsglobal.org/spec/lti/claim/version": "1.2.0"}, kind: fault.Invalid},
		{name: "another message type", changes: map[string]any{"https://purl.imsglobal.org/spec/lti/claim/message_type": "LtiSubmissionReviewRequest"}, kind: fault.Invalid},
		{name: "no resource link", changes: map[string]any{"https://purl.imsglobal.org/spec/lti/claim/resource_link": nil}, kind: fault.Invalid},
		{name: "resource link without id", changes: map[string]any{"https://purl.imsglobal.org/spec/lti/claim/resource_link": map[string]any{"title": "x"}}, kind: fault.Invalid},
		{name: "another target link", changes: map[string]any{"https://purl.imsglobal.org/spec/lti/claim/target_link_uri": "https://evil.example.com/"}, kind: fault.Invalid},
		{name: "no roles", changes: map[string]any{"https://purl.imsglobal.org/spec/lti/claim/roles": nil}, kind: fault.Invalid},
		{name: "roles not a list", changes: map[string]any{"https://purl.imsglobal.org/spec/lti/claim/roles": "Learner"}, kind: fault.Invalid},
		{name: "no sub", changes: map[string]any{"sub": nil}, kind: fault.Invalid},
		{name: "no deployment", changes: map[string]any{"https://purl.imsglobal.org/spec/lti/claim/deployment_id": nil}, kind: fault.Invalid},
	} {
		t.Run(c.name, func(t *testing.T) {
			l, err := ltidomain.CheckIDToken("springfield", registration, idToken(t, now, c.changes), want)
			switch {
			case c.err == nil && c.kind == 0 && err != nil:
				t.Fatalf("refused: %v", err)
			case c.err != nil && !errors.Is(err, c.err):
				t.Fatalf("err = %v, want %v", err, c.err)
			case c.kind != 0 && fault.KindOf(err) != c.kind:
				t.Fatalf("err = %v (kind %v), want kind %v", err, fault.KindOf(err), c.kind)
			case err == nil && (l.WorkspaceID != "springfield" || l.ResourceLinkID != "link-1" || l.DeploymentID != "1:abc"):
				t.Fatalf("launch = %+v", l)
			}
		})
	}
}

// The user: the email claim, or a stable address derived from the issuer
// and sub; custom claims read as LTI 1.1's custom_ parameters.
func TestIDTokenUserAndCustom(t *testing.T) {
	now := time.Date(2026, 11, 26, 8, 0, 0, 0, time.UTC)
	want := ltidomain.IDTokenExpectations{Nonce: "n-1", LaunchURL: launchURL, Now: now}
	l, err := ltidomain.CheckIDToken("w", registration, idToken(t, now, nil), want)
	if err != nil || l.Email != "ada@example.edu" || l.EmailDerived {
		t.Fatalf("with email: %+v, %v", l, err)
	}
	if id, err := ltidomain.CheckExamConfig(l.Custom); err != nil || id != "0f8fad5b-d9cb-469f-a165-70867728950e" {
		t.Fatalf("exam config from the custom claim: %q, %v", id, err)
	}
	withheld, _ := ltidomain.CheckIDToken("w", registration, idToken(t, now, map[string]any{"email": nil}), want)
	again, _ := ltidomain.CheckIDToken("w", registration, idToken(t, now, map[string]any{"email": nil}), want)
	other := registration
	other.Issuer = "https://moodle.example.edu"
	elsewhere, _ := ltidomain.CheckIDToken("w", other, idToken(t, now, map[string]any{"email": nil, "iss": other.Issuer}), want)
	if !withheld.EmailDerived || withheld.Email != again.Email || withheld.Email == elsewhere.Email || withheld.Email != ltidomain.DerivedLTI13Email(registration.Issuer, "user-7") {
		t.Fatalf("derived: %q, again %q, another platform's same sub %q", withheld.Email, again.Email, elsewhere.Email)
	}
}

// The course, the roles and the Advantage services are kept as the
// platform sent them; a malformed service claim leaves its service out,
// and the launch stands.
func TestIDTokenContextAndServices(t *testing.T) {
	now := time.Date(2026, 11, 26, 8, 0, 0, 0, time.UTC)
	want := ltidomain.IDTokenExpectations{Nonce: "n-1", LaunchURL: launchURL, Now: now}
	const (
		ags  = "https://purl.imsglobal.org/spec/lti-ags/claim/endpoint"
		nrps = "https://purl.imsglobal.org/spec/lti-nrps/claim/namesroleservice"
	)
	scopes := []string{"https://purl.imsglobal.org/spec/lti-ags/scope/score", "https://purl.imsglobal.org/spec/lti-ags/scope/lineitem"}
	l, err := ltidomain.CheckIDToken("w", registration, idToken(t, now, map[string]any{
		"https://purl.imsglobal.org/spec/lti/claim/context": map[string]any{"id": "course-9", "title": "Algebra"},
		ags:  map[string]any{"scope": scopes, "lineitems": "https://lms.example.edu/c/9/lineitems?type=x", "lineitem": "https://lms.example.edu/c/9/lineitems/4?type=x"},
		nrps: map[string]any{"context_memberships_url": "https://lms.example.edu/c/9/memberships", "service_versions": []string{"2.0"}},
	}), want)
	wantServices := ltidomain.LTI13Services{
		LineItems: "https://lms.example.edu/c/9/lineitems?type=x", LineItem: "https://lms.example.edu/c/9/lineitems/4?type=x",
		Scopes: scopes, MembershipsURL: "https://lms.example.edu/c/9/memberships",
	}
	if err != nil || l.ContextID != "course-9" || len(l.Roles) != 1 || l.Roles[0] != "http://purl.imsglobal.org/vocab/lis/v2/membership#Learner" ||
		fmt.Sprint(l.Services) != fmt.Sprint(wantServices) {
		t.Fatalf("launch = %+v, %v", l, err)
	}
	l, err = ltidomain.CheckIDToken("w", registration, idToken(t, now, map[string]any{ags: "https://lms.example.edu/x", nrps: []string{"x"}}), want)
	if err != nil || fmt.Sprint(l.Services) != fmt.Sprint(ltidomain.LTI13Services{}) || l.ContextID != "" {
		t.Fatalf("malformed service claims: %+v, %v", l, err)
	}
}

// A deep-linking request needs its settings, and echoes their data.
func TestIDTokenDeepLinking(t *testing.T) {
	now := time.Date(2026, 11, 26, 8, 0, 0, 0, time.UTC)
	want := ltidomain.IDTokenExpectations{Nonce: "n-1", LaunchURL: launchURL, Now: now}
	dl := map[string]any{
		"https://purl.imsglobal.org/spec/lti/claim/message_type":  "LtiDeepLinkingRequest",
		"https://purl.imsglobal.org/spec/lti/claim/resource_link": nil,
		"https://purl.imsglobal.org/spec/lti-dl/claim/deep_linking_settings": map[string]any{
			"deep_link_return_url": "https://canvas.example.edu/deep_link", "accept_types": []string{"link", "ltiResourceLink"},
			"data": `{"opaque": "x"}`,
		},
	}
	l, err := ltidomain.CheckIDToken("w", registration, idToken(t, now, dl), want)
	if err != nil || l.DeepLinking == nil || l.DeepLinking.Data != `{"opaque": "x"}` || l.DeepLinking.ReturnURL != "https://canvas.example.edu/deep_link" ||
		l.DeepLinking.LineItem {
		t.Fatalf("deep linking: %+v, %v", l, err)
	}
	// A line item is offered where the AGS claim is, unless accept_lineitem
	// says the platform ignores them.
	dl["https://purl.imsglobal.org/spec/lti-ags/claim/endpoint"] = map[string]any{"lineitems": "https://canvas.example.edu/lineitems"}
	for accept, offered := range map[any]bool{nil: true, true: true, false: false} {
		settings := map[string]any{"deep_link_return_url": "https://canvas.example.edu/deep_link", "accept_types": []string{"ltiResourceLink"}}
		if accept != nil {
			settings["accept_lineitem"] = accept
		}
		dl["https://purl.imsglobal.org/spec/lti-dl/claim/deep_linking_settings"] = settings
		l, err := ltidomain.CheckIDToken("w", registration, idToken(t, now, dl), want)
		if err != nil || l.DeepLinking.LineItem != offered {
			t.Errorf("accept_lineitem %v with the AGS claim: %+v, %v; want a line item %v", accept, l.DeepLinking, err, offered)
		}
	}
	dl["https://purl.imsglobal.org/spec/lti-dl/claim/deep_linking_settings"] = map[string]any{
		"deep_link_return_url": "https://canvas.example.edu/deep_link", "accept_types": []string{"file"},
	}
	if _, err := ltidomain.CheckIDToken("w", registration, idToken(t, now, dl), want); fault.KindOf(err) != fault.Invalid {
		t.Fatalf("accept_types without ltiResourceLink: %v", err)
	}
}
