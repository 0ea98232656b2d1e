package e2e

import (
	"html"
	"net/http"
	"net/url"
	"testing"

	"github.com/liveproctor/workspaces/deploy/local/stack"
)

// withExamClaim is a resource-link launch's custom claim naming an exam.
var withExamClaim = launchOverrides{Claims: map[string]any{customClaim: map[string]any{"exam_config_id": "7c9e6679-7425-40de-944b-e07fc1f90ae7"}}}

// launchOnce runs one whole launch of the platform's clientID and
// deploymentID, shaped by o, in a browser of its own, and returns the
// tool's answer to the form post.
func launchOnce(t *testing.T, p *platform, clientID, deploymentID string, o launchOverrides) (int, string) {
	t.Helper()
	b := newLaunchBrowser(t)
	p = p.withT(t)
	p.Next(o)
	a := p.Authorize(b.login(p.Login(clientID, deploymentID).URL))
	if a.Status != http.StatusOK {
		t.Fatalf("the platform refused the authentication request: %+v", a)
	}
	return b.post(a.Action, url.Values{"id_token": {a.IDToken}, "state": {a.State}})
}

// launchWorkspace is the workspace of the session a launch's page carries.
func launchWorkspace(t *testing.T, s *stack.Stack, page string) string {
	t.Helper()
	var got sdkSession
	token := html.UnescapeString(between(page, `data-auth="`, `"`))
	anonymous(t).on(s).do(http.MethodGet, "/api/sdk/session", nil, "Authorization", "Bearer "+token).ok(&got)
	return got.WorkspaceID
}

// One issuer, two workspaces: its client a in the first, its clients b and
// c in the second, c with two deployments. Every launch lands in the
// workspace of the registration of its (issuer, client), whatever the
// deployment id (the same "dep-1" in a and c); a deployment the
// registration does not list is refused; and a workspace sees nothing of
// the other's registrations.
func TestLTI13OneIssuerManyClientsAndDeployments(t *testing.T) {
	p := startPlatform(t, platformOptions{})
	s := startLTI13Stack(t, p.URL)
	a, b, c := clientID(t, "a"), clientID(t, "b"), clientID(t, "c")
	p.SetClients(s.GatewayURL, []platformClient{
		{ClientID: a, DeploymentIDs: []string{"dep-1"}},
		{ClientID: b, DeploymentIDs: []string{"dep-1"}},
		{ClientID: c, DeploymentIDs: []string{"dep-1", "dep-2", "dep-3"}},
	})
	root := asRoot(t).on(s)
	one, two := root.create(unique(t, "one"), nil), root.create(unique(t, "two"), nil)
	register := func(w createResult, client string, deployments ...string) ltiRegistration {
		return w.server(t).on(s).register(w.WorkspaceID, map[string]any{
			"issuer": p.Issuer, "clientId": client, "deploymentIds": deployments,
			"authLoginUrl": p.URL + "/auth", "jwksUrl": p.URL + "/jwks",
		})
	}
	regA := register(one, a, "dep-1")
	register(two, b, "dep-1")
	register(two, c, "dep-1", "dep-2")

	for _, tc := range []struct{ client, deployment, want string }{
		{a, "dep-1", one.WorkspaceID},
		{b, "dep-1", two.WorkspaceID},
		{c, "dep-1", two.WorkspaceID},
		{c, "dep-2", two.WorkspaceID},
		{a, "dep-1", one.WorkspaceID}, // again, after the others
	} {
		status, page := launchOnce(t, p, tc.client, tc.deployment, withExamClaim)
		if status != http.StatusOK {
			t.Fatalf("client %s, %s: %d\n%s", tc.client, tc.deployment, status, page)
		}
		if got := launchWorkspace(t, s, page); got != tc.want {
			t.Errorf("client %s, %s: the session is of workspace %q, want %q", tc.client, tc.deployment, got, tc.want)
		}
	}

	// A deployment of c that its registration does not list: refused at
	// the login already.
	login := p.withT(t).Login(c, "dep-3").URL
	resp, err := newLaunchBrowser(t).http.Get(login)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("a deployment the registration does not list: %s", resp.Status)
	}

	wantInvisible(t, two.server(t).on(s), two.WorkspaceID, one.WorkspaceID, regA)
	one.server(t).on(s).get(registrationPath(one.WorkspaceID, regA.ID)).ok(nil)
}

// wantInvisible checks that other, the server key pair of workspace own,
// sees nothing of registration reg of workspace theirs: not under their
// id, not under its own, not in its list (which holds its own 2).
func wantInvisible(t *testing.T, other client, own, theirs string, reg ltiRegistration) {
	t.Helper()
	other.get(registrationPath(theirs, reg.ID)).wantError(http.StatusNotFound, "NOT_FOUND", "")
	other.get(registrationPath(own, reg.ID)).wantError(http.StatusNotFound, "NOT_FOUND", "")
	other.delete(registrationPath(own, reg.ID)).wantError(http.StatusNotFound, "NOT_FOUND", "")
	var list struct{ Registrations []ltiRegistration }
	other.get(registrationsPath(own)).ok(&list)
	for _, r := range list.Registrations {
		if r.ID == reg.ID || r.ClientID == reg.ClientID {
			t.Errorf("workspace %s lists %s's registration: %+v", own, theirs, r)
		}
	}
	if len(list.Registrations) != 2 {
		t.Errorf("workspace %s lists %d registrations, want its 2", own, len(list.Registrations))
	}
}
