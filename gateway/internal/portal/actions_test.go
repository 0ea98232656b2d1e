package portal_test

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/liveproctor/workspaces/pkg/fault"
	workspacev1 "github.com/liveproctor/workspaces/pkg/gen/workspace/v1"
	"github.com/liveproctor/workspaces/pkg/grpcfault"
)

// action is a form the portal's pages post, and what it must ask of the
// service.
type action struct {
	path   string
	form   url.Values
	method string
	want   proto.Message
	// status and location are the answer: a redirect (303) to the page
	// to show next, or a page answered directly.
	status   int
	location string
}

func actions() []action {
	token := "https://canvas.example.edu/login/oauth2/token"
	return []action{
		{path: "/portal/lti13/registration-link", method: "CreateLtiRegistrationLink",
			want: &workspacev1.CreateLtiRegistrationLinkRequest{Id: workspaceID}, status: http.StatusOK},
		{path: "/portal/registrations", method: "CreateLtiRegistration",
			form: url.Values{"issuer": {" https://canvas.example.edu "}, "client_id": {"1000"}, "deployment_ids": {"1:a\r\n\r\n 2:b \n3:c, 4:d"},
				"auth_login_url": {"https://canvas.example.edu/api/lti/authorize_redirect"}, "jwks_url": {"https://canvas.example.edu/api/lti/security/jwks"},
				"auth_token_url": {token}},
			want: &workspacev1.CreateLtiRegistrationRequest{Id: workspaceID, Issuer: "https://canvas.example.edu", ClientId: "1000",
				DeploymentIds: []string{"1:a", "2:b", "3:c", "4:d"}, AuthLoginUrl: "https://canvas.example.edu/api/lti/authorize_redirect",
				JwksUrl: "https://canvas.example.edu/api/lti/security/jwks", AuthTokenUrl: &token},
			status: http.StatusSeeOther, location: "/portal/registrations/" + regID + "?done=registration-created"},
		{path: "/portal/registrations/" + regID + "/deployments", method: "AddLtiDeployment", form: url.Values{"deployment": {" 3:new "}},
			want:   &workspacev1.AddLtiDeploymentRequest{Id: workspaceID, RegistrationId: regID, DeploymentId: "3:new"},
			status: http.StatusSeeOther, location: "/portal/registrations/" + regID + "?done=deployment-added"},
		{path: "/portal/registrations/" + regID + "/deployments/remove", method: "RemoveLtiDeployment", form: url.Values{"deployment": {"2:odd/id"}},
			want:   &workspacev1.RemoveLtiDeploymentRequest{Id: workspaceID, RegistrationId: regID, DeploymentId: "2:odd/id"},
			status: http.StatusSeeOther, location: "/portal/registrations/" + regID + "?done=deployment-removed"},
		{path: "/portal/registrations/" + regID + "/delete", method: "DeleteLtiRegistration",
			want:   &workspacev1.DeleteLtiRegistrationRequest{Id: workspaceID, RegistrationId: regID},
			status: http.StatusSeeOther, location: "/portal/registrations?done=registration-deleted"},
		{path: "/portal/keys/" + serverKey + "/revoke", method: "RevokeWorkspaceKey",
			want:   &workspacev1.RevokeWorkspaceKeyRequest{Id: workspaceID, AppKey: serverKey},
			status: http.StatusSeeOther, location: "/portal/keys?done=key-revoked"},
		{path: "/portal/keys/" + ltiKey + "/rotate", method: "RotateWorkspaceKey", form: url.Values{"overlap": {"3600"}},
			status: http.StatusOK},
		{path: "/portal/sign-out", method: "RevokePortalLink",
			want: &workspacev1.RevokePortalLinkRequest{Id: workspaceID, LinkId: linkID}, status: http.StatusOK},
	}
}

// Each form calls its method with what the form holds, for the session's
// workspace and with the session's token, then redirects to the page to
// show next (with a notice that page shows), or answers its page.
func TestEachFormCallsItsMethod(t *testing.T) {
	for _, a := range actions() {
		t.Run(a.method, func(t *testing.T) {
			e := newEnv(t)
			got := e.post(t, a.path, a.form)
			if got.StatusCode != a.status || got.Header.Get("Location") != a.location {
				t.Fatalf("%d %s:\n%s", got.StatusCode, got.Header.Get("Location"), got.body)
			}
			checkHeaders(t, a.path, got)
			calls := e.fake.received()
			i := slices.IndexFunc(calls, func(c call) bool { return c.method == a.method })
			if i < 0 {
				t.Fatalf("no %s: %+v", a.method, calls)
			}
			if calls[i].session[0] != token || calls[i].md.Get("x-request-id")[0] != requestID {
				t.Errorf("metadata %v", calls[i].md)
			}
			if a.want != nil && !proto.Equal(calls[i].req, a.want) {
				t.Errorf("sent %v, want %v", calls[i].req, a.want)
			}
			if a.status == http.StatusOK {
				checkPage(t, a.path, got.body)
			}
			if a.location != "" {
				if notice := e.get(t, a.location); !strings.Contains(notice.body, `class="notice" role="status"`) {
					t.Errorf("%s shows no notice", a.location)
				}
			}
		})
	}
}

// A post without the session's CSRF token, with another one, or from
// another site is 403 and asks nothing of the service.
func TestPostsNeedTheirTokenAndOrigin(t *testing.T) {
	e := newEnv(t)
	csrf := e.csrf(t)
	for _, a := range actions() {
		for name, try := range map[string]struct {
			csrf   string
			header http.Header
		}{
			"no token":        {"", sameSite},
			"another token":   {strings.Repeat("A", len(csrf)), sameSite},
			"a shorter token": {csrf[:10], sameSite},
			"cross-site":      {csrf, http.Header{"Sec-Fetch-Site": {"cross-site"}}},
			"another origin":  {csrf, http.Header{"Origin": {"https://evil.example"}}},
			"no origin":       {csrf, nil},
		} {
			form := url.Values{}
			for k, vs := range a.form {
				form[k] = vs
			}
			if try.csrf != "" {
				form.Set("csrf", try.csrf)
			}
			got := e.do(t, http.MethodPost, a.path, token, form, try.header)
			if got.StatusCode != http.StatusForbidden || !strings.Contains(got.body, "This form cannot be accepted") {
				t.Errorf("%s, %s: %d", a.path, name, got.StatusCode)
			}
			checkHeaders(t, a.path, got)
		}
	}
	if calls := e.fake.received(); len(calls) != 0 {
		t.Fatalf("calls %+v", calls)
	}
}

// The token is the HMAC-SHA256 of "portal csrf" keyed by the session's
// token, base64url: the same for every page of a session, another for
// another session.
func TestTheCSRFTokenIsTheSessions(t *testing.T) {
	mac := hmac.New(sha256.New, []byte(token))
	mac.Write([]byte("portal csrf"))
	want := base64.RawURLEncoding.EncodeToString(mac.Sum(nil))
	e := newEnv(t)
	for _, path := range pagePaths {
		doc := parse(t, e.get(t, path).body)
		for _, in := range findAll(doc, "input") {
			if attr(in, "name") == "csrf" && attr(in, "value") != want {
				t.Fatalf("%s: csrf %q, want %q", path, attr(in, "value"), want)
			}
		}
	}
}

// A secret is shown once: the rotation's answer holds the successor's, and
// no other page holds any pair's, though the service lists them.
func TestSecretsAreShownOnce(t *testing.T) {
	e := newEnv(t)
	rotated := e.post(t, "/portal/keys/"+ltiKey+"/rotate", url.Values{"overlap": {"86400"}})
	for _, want := range []string{`value="` + newSecret + `"`, `value="` + newKey + `"`, "Shared secret", "Consumer key", "not shown again", "27 Nov 2026, 10:00 UTC"} {
		if !strings.Contains(rotated.body, want) {
			t.Errorf("the rotation's page lacks %s:\n%s", want, rotated.body)
		}
	}
	if rotated.Header.Get("Cache-Control") != "no-store" {
		t.Errorf("cached: %v", rotated.Header)
	}
	calls := e.fake.received()
	rotate := calls[len(calls)-1].req.(*workspacev1.RotateWorkspaceKeyRequest)
	if rotate.GetExpireAfter().AsDuration() != 24*time.Hour || rotate.GetAppKey() != ltiKey {
		t.Errorf("sent %v", rotate)
	}
	for _, path := range pagePaths {
		body := e.get(t, path).body
		for _, secret := range []string{serverSecret, ltiSecret, newSecret} {
			if strings.Contains(body, secret) {
				t.Errorf("%s shows %s", path, secret)
			}
		}
	}
}

// A rotation's overlap is one of the choices the form offers; anything
// else is refused before the service is asked.
func TestARotationTakesTheOffersOnly(t *testing.T) {
	e := newEnv(t)
	for _, overlap := range []string{"", "60", "-1", "604801", "1h"} {
		got := e.post(t, "/portal/keys/"+serverKey+"/rotate", url.Values{"overlap": {overlap}})
		if got.StatusCode != http.StatusBadRequest {
			t.Errorf("%q: %d", overlap, got.StatusCode)
		}
		if slices.ContainsFunc(e.fake.received(), func(c call) bool { return c.method == "RotateWorkspaceKey" }) {
			t.Errorf("%q: rotated", overlap)
		}
	}
	got := e.post(t, "/portal/keys/"+serverKey+"/rotate", url.Values{"overlap": {"0"}})
	calls := e.fake.received()
	if got.StatusCode != http.StatusOK || calls[len(calls)-1].req.(*workspacev1.RotateWorkspaceKeyRequest).GetExpireAfter().AsDuration() != 0 {
		t.Errorf("at once: %d %v", got.StatusCode, calls)
	}
}

// Signing out revokes the session's own link and clears the cookie; the
// page after it has no session's navigation but the way back.
func TestSigningOut(t *testing.T) {
	e := newEnv(t)
	got := e.post(t, "/portal/sign-out", nil)
	if got.StatusCode != http.StatusOK || !strings.Contains(got.Header.Get("Set-Cookie"), "portal_session=; Path=/portal; Max-Age=0; HttpOnly; Secure; SameSite=Lax") ||
		!strings.Contains(got.body, `href="https://vendor.example/settings" rel="noreferrer"`) || strings.Contains(got.body, `action="/portal/sign-out"`) {
		t.Fatalf("%d %v:\n%s", got.StatusCode, got.Header, got.body)
	}
}

// A refused action shows the service's message with its status, beside
// the way back; a refused registration shows its form again as entered,
// with the fields the service blamed.
func TestARefusedActionSaysWhy(t *testing.T) {
	e := newEnv(t)
	e.fake.fail("AddLtiDeployment", grpcfault.Status(fault.New(fault.FailedPrecondition, "the registration holds 100 deployment ids, the most it may")))
	got := e.post(t, "/portal/registrations/"+regID+"/deployments", url.Values{"deployment": {"101"}})
	if got.StatusCode != http.StatusConflict || !strings.Contains(got.body, "holds 100 deployment ids") || !strings.Contains(got.body, `href="/portal/registrations/`+regID+`">Go back`) {
		t.Errorf("%d:\n%s", got.StatusCode, got.body)
	}
	checkPage(t, "refused", got.body)

	e.fake.fail("CreateLtiRegistration", grpcfault.Status(fault.InvalidField("jwksUrl", "must be a public https URL: http://10.0.0.1/jwks")))
	got = e.post(t, "/portal/registrations", url.Values{"issuer": {"https://lms.example.edu"}, "client_id": {"c<1>"}, "jwks_url": {"http://10.0.0.1/jwks"}})
	for _, want := range []string{`value="https://lms.example.edu"`, `value="c&lt;1&gt;"`, `value="http://10.0.0.1/jwks"`, "JWKS URL: must be a public https URL", `role="alert"`} {
		if !strings.Contains(got.body, want) {
			t.Errorf("the form lacks %s:\n%s", want, got.body)
		}
	}
	if got.StatusCode != http.StatusBadRequest || strings.Contains(got.body, "jwksUrl") {
		t.Errorf("%d, the API's name of the field shown:\n%s", got.StatusCode, got.body)
	}
	checkPage(t, "refused form", got.body)

	// A refusal that blames no field says why in the service's words.
	e.fake.fail("CreateLtiRegistration", grpcfault.Status(fault.New(fault.Conflict, "the issuer and client id are registered already")))
	got = e.post(t, "/portal/registrations", url.Values{"issuer": {"https://lms.example.edu"}, "client_id": {"c1"}})
	if got.StatusCode != http.StatusConflict || !strings.Contains(got.body, "registered already") || !strings.Contains(got.body, `value="c1"`) {
		t.Errorf("a conflict: %d\n%s", got.StatusCode, got.body)
	}

	e.fake.fail("DeleteLtiRegistration", grpcfault.Status(fault.New(fault.Unauthenticated, "the portal session has ended")))
	if got := e.post(t, "/portal/registrations/"+regID+"/delete", nil); got.StatusCode != http.StatusUnauthorized || !strings.Contains(got.body, "Your portal session has ended") {
		t.Errorf("%d:\n%s", got.StatusCode, got.body)
	}
}

// A Dynamic Registration link is answered on the set-up page with its
// expiry, never put in an address.
func TestADynamicRegistrationLinkIsShownOnItsPage(t *testing.T) {
	e := newEnv(t)
	got := e.post(t, "/portal/lti13/registration-link", nil)
	for _, want := range []string{`value="https://lti.example.com/lti/v1p3/register/dr-secret-1"`, "26 Nov 2026, 11:00 UTC"} {
		if !strings.Contains(got.body, want) {
			t.Errorf("lacks %s:\n%s", want, got.body)
		}
	}
	if strings.Contains(e.get(t, "/portal/lti13").body, "dr-secret-1") {
		t.Error("the link is on the page again")
	}
}
