package e2e

import (
	"html"
	"net/http"
	"slices"
	"strings"
	"testing"
)

// ltiLaunch is a remembered launch as GET
// /api/workspace/{id}/lti/launches/{launchId} answers it.
type ltiLaunch struct {
	LaunchID       string   `json:"launchId"`
	RegistrationID string   `json:"registrationId"`
	DeploymentID   string   `json:"deploymentId"`
	ContextID      string   `json:"contextId"`
	ResourceLinkID string   `json:"resourceLinkId"`
	Sub            string   `json:"sub"`
	Email          string   `json:"email"`
	Roles          []string `json:"roles"`
	AGS            struct {
		LineItem  string   `json:"lineItem"`
		LineItems string   `json:"lineItems"`
		Scopes    []string `json:"scopes"`
	} `json:"ags"`
	NRPS struct {
		MembershipsURL string `json:"membershipsUrl"`
	} `json:"nrps"`
	LaunchedAt string `json:"launchedAt"`
}

// A resource-link launch from the platform is remembered: its session
// shows the launch id, and the workspace's server pair (or a manager's)
// reads the launch with its course, roles and the AGS and NRPS claims as
// the platform sent them; another workspace, an unknown id and a session
// opened by a login see none. Every call is held to the OpenAPI document.
func TestLTI13LaunchIsRemembered(t *testing.T) {
	const (
		exam       = "7c9e6679-7425-40de-944b-e07fc1f90ae7"
		instructor = "http://purl.imsglobal.org/vocab/lis/v2/membership#Instructor"
		scoreScope = "https://purl.imsglobal.org/spec/lti-ags/scope/score"
	)
	p := startPlatform(t, platformOptions{})
	s := startLTI13Stack(t, p.URL)
	c := platformClient{ClientID: clientID(t, "a"), DeploymentIDs: []string{"dep-1"}}
	p.SetClients(s.GatewayURL, []platformClient{c})
	w := asRoot(t).on(s).create(unique(t, "school"), nil)
	var reg struct {
		ID string `json:"id"`
	}
	w.server(t).on(s).post("/api/workspace/"+w.WorkspaceID+"/lti/registrations", map[string]any{
		"issuer": p.Issuer, "clientId": c.ClientID, "deploymentIds": []string{"dep-1"},
		"authLoginUrl": p.URL + "/auth", "jwksUrl": p.URL + "/jwks",
	}).ok(&reg)
	launches := lti13Launches{t: t, platform: p, clientID: c.ClientID}

	lineItem := p.URL + "/courses/7/lineitems/3/lineitem?type_id=1"
	browser := newLaunchBrowser(t)
	claims := map[string]any{
		customClaim: map[string]any{"exam_config_id": exam},
		"https://purl.imsglobal.org/spec/lti/claim/roles":   []string{instructor},
		"https://purl.imsglobal.org/spec/lti/claim/context": map[string]any{"id": "course-7", "title": "Algebra"},
		"https://purl.imsglobal.org/spec/lti-ags/claim/endpoint": map[string]any{
			"scope": []string{scoreScope}, "lineitems": p.URL + "/courses/7/lineitems?type_id=1", "lineitem": lineItem,
		},
		"https://purl.imsglobal.org/spec/lti-nrps/claim/namesroleservice": map[string]any{
			"context_memberships_url": p.URL + "/courses/7/memberships", "service_versions": []string{"2.0"},
		},
	}
	action, form := launches.start(browser, launchOverrides{Claims: claims})
	status, page := browser.post(action, form)
	if status != http.StatusOK {
		t.Fatalf("the launch: %d\n%s", status, page)
	}
	var session struct {
		sdkSession
		LTI *struct {
			LaunchID string `json:"launchId"`
		} `json:"lti"`
	}
	token := html.UnescapeString(between(page, `data-auth="`, `"`))
	anonymous(t).on(s).do(http.MethodGet, "/api/sdk/session", nil, "Authorization", "Bearer "+token).ok(&session)
	if session.LTI == nil || len(session.LTI.LaunchID) != 43 {
		t.Fatalf("the launch's session: %+v, %+v", session.sdkSession, session.LTI)
	}
	id := session.LTI.LaunchID

	path := "/api/workspace/" + w.WorkspaceID + "/lti/launches/" + id
	var got ltiLaunch
	w.server(t).on(s).get(path).ok(&got)
	if got.LaunchID != id || got.RegistrationID != reg.ID || got.DeploymentID != "dep-1" || got.ContextID != "course-7" ||
		got.ResourceLinkID != "course-7-exam-1" || got.Sub != "platform-user-42" || got.Email != "ada@school.example" ||
		!slices.Equal(got.Roles, []string{instructor}) || got.AGS.LineItem != lineItem ||
		got.AGS.LineItems != p.URL+"/courses/7/lineitems?type_id=1" || !slices.Equal(got.AGS.Scopes, []string{scoreScope}) ||
		got.NRPS.MembershipsURL != p.URL+"/courses/7/memberships" || !strings.HasSuffix(got.LaunchedAt, "Z") {
		t.Fatalf("the launch as read: %+v", got)
	}
	asRoot(t).on(s).get(path).ok(nil)

	other := asRoot(t).on(s).create(unique(t, "other"), nil)
	other.server(t).on(s).get(path).wantError(http.StatusNotFound, "NOT_FOUND", "")
	other.server(t).on(s).get("/api/workspace/"+other.WorkspaceID+"/lti/launches/"+id).wantError(http.StatusNotFound, "NOT_FOUND", "")
	w.server(t).on(s).get("/api/workspace/"+w.WorkspaceID+"/lti/launches/unknown").wantError(http.StatusNotFound, "NOT_FOUND", "")

	login := w.server(t).on(s).login("ada@school.example", w.WorkspaceID)
	var plain map[string]any
	anonymous(t).on(s).do(http.MethodGet, "/api/sdk/session", nil, "Authorization", "Bearer "+login.Auth).ok(&plain)
	if _, ok := plain["lti"]; ok {
		t.Fatalf("a login's session shows an LTI launch: %v", plain)
	}
}
