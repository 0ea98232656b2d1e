package e2e

import (
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"
)

// ltiRegistration is a registration as the LTI 1.3 routes answer it.
type ltiRegistration struct {
	ID            string   `json:"id"`
	Issuer        string   `json:"issuer"`
	ClientID      string   `json:"clientId"`
	DeploymentIDs []string `json:"deploymentIds"`
	AuthLoginURL  string   `json:"authLoginUrl"`
	JWKSURL       string   `json:"jwksUrl"`
	AuthTokenURL  *string  `json:"authTokenUrl"`
	CreatedAt     string   `json:"createdAt"`
	// Launch health: null until a launch is accepted; the refusals, newest
	// first.
	LastLaunchAt   *string            `json:"lastLaunchAt"`
	RecentFailures []ltiLaunchFailure `json:"recentFailures"`
}

// ltiLaunchFailure is a refused launch or login as a registration's
// launch health shows it.
type ltiLaunchFailure struct {
	At        string `json:"at"`
	Reason    string `json:"reason"`
	RequestID string `json:"requestId"`
}

const canvasIssuer = "https://canvas.instructure.com"

func registrationsPath(id string) string { return "/api/workspace/" + id + "/lti/registrations" }

func registrationPath(id, registrationID string) string {
	return registrationsPath(id) + "/" + url.PathEscape(registrationID)
}

func deploymentPath(id, registrationID, deploymentID string) string {
	return registrationPath(id, registrationID) + "/deployments/" + url.PathEscape(deploymentID)
}

// canvasRegistration is the body that registers Canvas's hosted issuer
// with clientID.
func canvasRegistration(clientID string, deployments ...string) map[string]any {
	if deployments == nil {
		deployments = []string{}
	}
	return map[string]any{
		"issuer":        canvasIssuer,
		"clientId":      clientID,
		"deploymentIds": deployments,
		"authLoginUrl":  "https://sso.canvaslms.com/api/lti/authorize_redirect",
		"jwksUrl":       "https://sso.canvaslms.com/api/lti/security/jwks",
	}
}

func (c client) register(id string, body map[string]any) ltiRegistration {
	c.t.Helper()
	var r ltiRegistration
	c.post(registrationsPath(id), body).ok(&r)
	return r
}

func (c client) registrations(id string) []ltiRegistration {
	c.t.Helper()
	var page struct {
		Registrations []ltiRegistration `json:"registrations"`
	}
	c.get(registrationsPath(id)).ok(&page)
	return page.Registrations
}

// clientID is a client id no other test registers: (issuer, clientId)
// pairs are unique across the whole store.
func clientID(t *testing.T, suffix string) string { return unique(t, suffix) }

// A workspace registers a platform, reads it back, lets deployments launch
// and stops them, and deletes it; each change is in its audit trail, with
// the registration as the target.
func TestLTIRegistrationLifecycle(t *testing.T) {
	w := asRoot(t).create(unique(t, "w"), nil)
	self := w.server(t)
	id := w.WorkspaceID

	if regs := self.registrations(id); len(regs) != 0 {
		t.Fatalf("a new workspace's registrations: %+v", regs)
	}
	body := canvasRegistration(clientID(t, "c"), "1:8865aa05b4b79b64a91a86042e43af5ea8ae79eb")
	reg := self.register(id, body)
	if !uuidPattern.MatchString(reg.ID) || reg.Issuer != canvasIssuer || reg.ClientID != body["clientId"] ||
		!slices.Equal(reg.DeploymentIDs, body["deploymentIds"].([]string)) || reg.AuthTokenURL != nil ||
		reg.JWKSURL != body["jwksUrl"] || !timePattern.MatchString(reg.CreatedAt) {
		t.Fatalf("created: %+v", reg)
	}
	var got ltiRegistration
	self.get(registrationPath(id, reg.ID)).ok(&got)
	if fmt.Sprint(got) != fmt.Sprint(reg) {
		t.Fatalf("get: %+v, want %+v", got, reg)
	}

	// The second, with a token endpoint and no deployment yet.
	second := canvasRegistration(clientID(t, "d"))
	second["authTokenUrl"] = "https://sso.canvaslms.com/login/oauth2/token"
	other := self.register(id, second)
	if other.AuthTokenURL == nil || *other.AuthTokenURL != second["authTokenUrl"] || other.DeploymentIDs == nil || len(other.DeploymentIDs) != 0 {
		t.Fatalf("created with a token URL and no deployments: %+v", other)
	}
	if regs := self.registrations(id); len(regs) != 2 || regs[0].ID != reg.ID || regs[1].ID != other.ID {
		t.Fatalf("list: %+v", regs)
	}

	// Deployment ids are any printable ASCII: a slash and a space travel
	// escaped in the path, a colon as it is.
	odd := "a/b c:d"
	for range 2 { // adding one already there changes nothing
		self.post(registrationPath(id, other.ID)+"/deployments", map[string]any{"deploymentId": odd}).ok(&got)
		if !slices.Equal(got.DeploymentIDs, []string{odd}) {
			t.Fatalf("after adding %q: %+v", odd, got)
		}
	}
	self.post(registrationPath(id, other.ID)+"/deployments", map[string]any{"deploymentId": "2:x"}).ok(nil)
	self.delete(deploymentPath(id, other.ID, odd)).ok(&got)
	if !slices.Equal(got.DeploymentIDs, []string{"2:x"}) {
		t.Fatalf("after removing %q: %+v", odd, got)
	}
	self.delete(deploymentPath(id, other.ID, odd)).wantError(http.StatusNotFound, "NOT_FOUND", "")
	self.delete(deploymentPath(id, other.ID, "2:x")).ok(&got)

	self.delete(registrationPath(id, reg.ID)).ok(&got)
	if got.ID != reg.ID || got.ClientID != reg.ClientID {
		t.Fatalf("delete answered %+v", got)
	}
	self.get(registrationPath(id, reg.ID)).wantError(http.StatusNotFound, "NOT_FOUND", "")
	self.delete(registrationPath(id, reg.ID)).wantError(http.StatusNotFound, "NOT_FOUND", "")
	self.post(registrationPath(id, reg.ID)+"/deployments", map[string]any{"deploymentId": "3"}).wantError(http.StatusNotFound, "NOT_FOUND", "")

	types := []string{"ltiRegistration.created", "ltiRegistration.deleted", "ltiRegistration.deploymentAdded", "ltiRegistration.deploymentRemoved"}
	page := self.waitEvents(id, url.Values{"type": types},
		"ltiRegistration.created", "ltiRegistration.created",
		"ltiRegistration.deploymentAdded", "ltiRegistration.deploymentAdded",
		"ltiRegistration.deploymentRemoved", "ltiRegistration.deploymentRemoved",
		"ltiRegistration.deleted")
	targets := []string{reg.ID, other.ID, other.ID, other.ID, other.ID, other.ID, reg.ID}
	for i, e := range page.Events {
		if e.Target.Type != "ltiRegistration" || e.Target.ID != targets[i] || e.Actor.AppKey != w.AppKeys.Server.ConsumerKey {
			t.Fatalf("event %d: %+v", i, e)
		}
		if wantChanged := strings.Contains(e.Type, "deployment"); wantChanged != slices.Equal(e.ChangedFields, []string{"deploymentIds"}) {
			t.Fatalf("event %d's changedFields: %+v", i, e)
		}
	}
}

// An (issuer, clientId) pair belongs to one registration across all
// workspaces: a second, anywhere, is 409; once deleted, the pair is free.
func TestLTIRegistrationPairIsTakenStoreWide(t *testing.T) {
	root := asRoot(t)
	a := root.create(unique(t, "a"), nil)
	b := root.create(unique(t, "b"), nil)
	body := canvasRegistration(clientID(t, "c"))
	reg := a.server(t).register(a.WorkspaceID, body)

	b.server(t).post(registrationsPath(b.WorkspaceID), body).wantError(http.StatusConflict, "ALREADY_EXISTS", "")
	root.post(registrationsPath(a.WorkspaceID), body).wantError(http.StatusConflict, "ALREADY_EXISTS", "")
	// Another client id of the same issuer is another platform.
	b.server(t).register(b.WorkspaceID, canvasRegistration(clientID(t, "d")))

	a.server(t).delete(registrationPath(a.WorkspaceID, reg.ID)).ok(nil)
	moved := b.server(t).register(b.WorkspaceID, body)
	if moved.ID == reg.ID {
		t.Fatal("the pair's new registration has the old id")
	}
}

// The rule of the key pairs: the workspace itself and its managers, with a
// server pair; another tenant gets 404 for the workspace and for the
// registration, a deleted workspace is 404, an LTI pair 403.
func TestLTIRegistrationsAreTheWorkspacesAndItsManagers(t *testing.T) {
	root := asRoot(t)
	a := root.create(unique(t, "a"), nil)
	b := root.create(unique(t, "b"), nil)
	reg := root.register(a.WorkspaceID, canvasRegistration(clientID(t, "c")))
	if regs := a.server(t).registrations(a.WorkspaceID); len(regs) != 1 || regs[0].ID != reg.ID {
		t.Fatalf("the workspace's own list: %+v", regs)
	}

	asB := b.server(t)
	asB.get(registrationsPath(a.WorkspaceID)).wantError(http.StatusNotFound, "NOT_FOUND", "")
	asB.post(registrationsPath(a.WorkspaceID), canvasRegistration(clientID(t, "d"))).wantError(http.StatusNotFound, "NOT_FOUND", "")
	asB.get(registrationPath(a.WorkspaceID, reg.ID)).wantError(http.StatusNotFound, "NOT_FOUND", "")
	asB.delete(registrationPath(a.WorkspaceID, reg.ID)).wantError(http.StatusNotFound, "NOT_FOUND", "")
	asB.post(registrationPath(a.WorkspaceID, reg.ID)+"/deployments", map[string]any{"deploymentId": "1"}).wantError(http.StatusNotFound, "NOT_FOUND", "")
	asB.delete(deploymentPath(a.WorkspaceID, reg.ID, "1")).wantError(http.StatusNotFound, "NOT_FOUND", "")
	// Its own workspace id does not reach a's registration.
	asB.get(registrationPath(b.WorkspaceID, reg.ID)).wantError(http.StatusNotFound, "NOT_FOUND", "")
	asB.delete(registrationPath(b.WorkspaceID, reg.ID)).wantError(http.StatusNotFound, "NOT_FOUND", "")

	lti := as(t, a.AppKeys.LTI.ConsumerKey, a.AppKeys.LTI.SharedSecret)
	lti.get(registrationsPath(a.WorkspaceID)).wantError(http.StatusForbidden, "PERMISSION_DENIED", "")
	lti.post(registrationsPath(a.WorkspaceID), canvasRegistration(clientID(t, "e"))).wantError(http.StatusForbidden, "PERMISSION_DENIED", "")

	root.delete("/api/workspace/" + a.WorkspaceID).ok(nil)
	root.get(registrationsPath(a.WorkspaceID)).wantError(http.StatusNotFound, "NOT_FOUND", "")
	root.get(registrationPath(a.WorkspaceID, reg.ID)).wantError(http.StatusNotFound, "NOT_FOUND", "")
	root.post("/api/workspace/"+a.WorkspaceID+":undelete", nil).ok(nil)
	root.get(registrationPath(a.WorkspaceID, reg.ID)).ok(nil)
}

// Bad fields are 400 naming the field: platform URLs that are not https on
// a public host (LTI_ALLOW_INSECURE_HOSTS is empty on the shared stack),
// with user information or a fragment, an issuer with a query, client and
// deployment ids out of bounds.
func TestLTIRegistrationBadFieldsAre400(t *testing.T) {
	w := asRoot(t).create(unique(t, "w"), nil)
	self := w.server(t)
	path := registrationsPath(w.WorkspaceID)
	with := func(field string, value any) map[string]any {
		body := canvasRegistration(clientID(t, "c"))
		body[field] = value
		return body
	}
	tooMany := make([]string, 101)
	for i := range tooMany {
		tooMany[i] = fmt.Sprint(i)
	}
	cases := []struct {
		name  string
		body  map[string]any
		field string
	}{
		{"http", with("jwksUrl", "http://sso.canvaslms.com/api/lti/security/jwks"), "jwksUrl"},
		{"loopback", with("jwksUrl", "https://127.0.0.1:8443/jwks"), "jwksUrl"},
		{"loopback over http", with("authLoginUrl", "http://127.0.0.1:8443/login"), "authLoginUrl"},
		{"private", with("authLoginUrl", "https://10.0.0.7/login"), "authLoginUrl"},
		{"link-local", with("authTokenUrl", "https://169.254.169.254/latest"), "authTokenUrl"},
		{"localhost", with("jwksUrl", "https://localhost/jwks"), "jwksUrl"},
		{"IPv6 loopback", with("jwksUrl", "https://[::1]/jwks"), "jwksUrl"},
		{"NAT64 to link-local", with("jwksUrl", "https://[64:ff9b::a9fe:a9fe]/jwks"), "jwksUrl"},
		{"6to4", with("authLoginUrl", "https://[2002:808:808::1]/login"), "authLoginUrl"},
		{"user information", with("jwksUrl", "https://user:pw@sso.canvaslms.com/jwks"), "jwksUrl"},
		{"fragment", with("jwksUrl", "https://sso.canvaslms.com/jwks#keys"), "jwksUrl"},
		{"over 2048 bytes", with("jwksUrl", "https://sso.canvaslms.com/"+strings.Repeat("a", 2048)), "jwksUrl"},
		{"empty token URL", with("authTokenUrl", ""), "authTokenUrl"},
		{"issuer with a query", with("issuer", canvasIssuer+"/?tenant=1"), "issuer"},
		{"issuer over http", with("issuer", "http://canvas.instructure.com"), "issuer"},
		{"issuer not a URL", with("issuer", "canvas"), "issuer"},
		{"no client id", with("clientId", ""), "clientId"},
		{"client id of 256", with("clientId", strings.Repeat("c", 256)), "clientId"},
		{"client id with a tab", with("clientId", "a\tb"), "clientId"},
		{"duplicate deployment ids", with("deploymentIds", []string{"1", "1"}), "deploymentIds"},
		{"an empty deployment id", with("deploymentIds", []string{""}), "deploymentIds"},
		{"101 deployment ids", with("deploymentIds", tooMany), "deploymentIds"},
		{"another workspace id in the body", with("id", "someone-else"), "id"},
	}
	missing := canvasRegistration(clientID(t, "c"))
	delete(missing, "jwksUrl")
	cases = append(cases, struct {
		name  string
		body  map[string]any
		field string
	}{"no jwksUrl", missing, "jwksUrl"})
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			self.withT(t).post(path, c.body).wantError(http.StatusBadRequest, "INVALID_ARGUMENT", c.field)
		})
	}

	reg := self.register(w.WorkspaceID, canvasRegistration(clientID(t, "ok")))
	deployments := registrationPath(w.WorkspaceID, reg.ID) + "/deployments"
	self.post(deployments, map[string]any{"deploymentId": ""}).wantError(http.StatusBadRequest, "INVALID_ARGUMENT", "deploymentId")
	self.post(deployments, map[string]any{"deploymentId": strings.Repeat("d", 256)}).wantError(http.StatusBadRequest, "INVALID_ARGUMENT", "deploymentId")
	self.post(deployments, map[string]any{}).wantError(http.StatusBadRequest, "INVALID_ARGUMENT", "deploymentId")
	self.post(deployments, map[string]any{"deploymentId": "1", "registrationId": "another"}).
		wantError(http.StatusBadRequest, "INVALID_ARGUMENT", "registrationId")
}

// At most 20 registrations per workspace and 100 deployment ids per
// registration: past them, 409 FAILED_PRECONDITION.
func TestLTIRegistrationBounds(t *testing.T) {
	w := asRoot(t).create(unique(t, "w"), nil)
	self := w.server(t)
	ids := make([]string, 100)
	for i := range ids {
		ids[i] = fmt.Sprint("deployment-", i)
	}
	full := self.register(w.WorkspaceID, canvasRegistration(clientID(t, "full"), ids...))
	self.post(registrationPath(w.WorkspaceID, full.ID)+"/deployments", map[string]any{"deploymentId": "one too many"}).
		wantError(http.StatusConflict, "FAILED_PRECONDITION", "")
	for i := 1; i < 20; i++ {
		self.register(w.WorkspaceID, canvasRegistration(clientID(t, fmt.Sprint("c", i))))
	}
	self.post(registrationsPath(w.WorkspaceID), canvasRegistration(clientID(t, "21st"))).
		wantError(http.StatusConflict, "FAILED_PRECONDITION", "")
}

// LTI_ALLOW_INSECURE_HOSTS names the host:port entries a registration may
// use over http or on loopback (tests' platforms); the shared stack names
// none, so this test runs a stack of its own.
func TestLTIInsecureHostsAreAllowedWhereConfigured(t *testing.T) {
	s := startOwnStack(t, "LTI_ALLOW_INSECURE_HOSTS=127.0.0.1:8443,platform.test:80")
	root := asRoot(t).on(s)
	w := root.create(unique(t, "w"), nil)
	path := registrationsPath(w.WorkspaceID)
	body := map[string]any{
		"issuer":        "http://platform.test",
		"clientId":      clientID(t, "c"),
		"deploymentIds": []string{},
		"authLoginUrl":  "http://127.0.0.1:8443/login",
		"jwksUrl":       "https://127.0.0.1:8443/jwks",
	}
	reg := root.register(w.WorkspaceID, body)
	if reg.Issuer != "http://platform.test" || reg.AuthLoginURL != "http://127.0.0.1:8443/login" {
		t.Fatalf("registered: %+v", reg)
	}
	body["clientId"] = clientID(t, "d")
	body["jwksUrl"] = "http://127.0.0.1:8444/jwks"
	root.post(path, body).wantError(http.StatusBadRequest, "INVALID_ARGUMENT", "jwksUrl")
}
